package e2e

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
)

func TestWritesAreMethodNotAllowed(t *testing.T) {
	ctx := testContext(t)
	rc := env.osm.OsmV1alpha1().RESTClient()
	for _, resource := range []string{"operatingsystemconfigs", "provisioningpayloads", "bootreports"} {
		name := "e2e-ubuntu-aws"
		if resource == "provisioningpayloads" {
			name += "-bootstrap"
		}
		body := `{"apiVersion":"osm.k8c.io/v1alpha1","metadata":{"name":"` + name + `","namespace":"e2e"}}`
		requests := map[string]func() error{
			"create": func() error {
				return rc.Post().Namespace(testNamespace).Resource(resource).Body([]byte(body)).Do(ctx).Error()
			},
			"update": func() error {
				return rc.Put().Namespace(testNamespace).Resource(resource).Name(name).Body([]byte(body)).Do(ctx).Error()
			},
			"patch": func() error {
				return rc.Patch(types.MergePatchType).Namespace(testNamespace).Resource(resource).Name(name).
					Body([]byte(`{"metadata":{"labels":{"a":"b"}}}`)).Do(ctx).Error()
			},
			"delete": func() error {
				return rc.Delete().Namespace(testNamespace).Resource(resource).Name(name).Do(ctx).Error()
			},
			"deletecollection": func() error {
				return rc.Delete().Namespace(testNamespace).Resource(resource).Do(ctx).Error()
			},
		}
		for verb, do := range requests {
			t.Run(resource+"/"+verb, func(t *testing.T) {
				if err := do(); !apierrors.IsMethodNotSupported(err) {
					t.Errorf("%s %s: got %v, want 405 MethodNotAllowed", verb, resource, err)
				}
			})
		}
	}
	// And as a user sees it.
	if out := kubectlFails(t, "delete", "osc", "-n", testNamespace, "e2e-ubuntu-aws"); !strings.Contains(out, "not allow") {
		t.Errorf("kubectl delete osc: %s", out)
	}
	if _, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(testNamespace).Get(ctx, "e2e-ubuntu-aws", getOptions()); err != nil {
		t.Errorf("the OSC is gone after the refused writes: %v", err)
	}
}

func TestUnknownNamesAreNotFound(t *testing.T) {
	ctx := testContext(t)
	oscs := env.osm.OsmV1alpha1().OperatingSystemConfigs
	payloads := env.osm.OsmV1alpha1().ProvisioningPayloads
	cases := []struct {
		name, resource string
		get            func() error
	}{
		{"no such MD", "operatingsystemconfigs", func() error { _, err := oscs(testNamespace).Get(ctx, "no-such-md", getOptions()); return err }},
		{"MD in another namespace", "operatingsystemconfigs", func() error { _, err := oscs("default").Get(ctx, "e2e-ubuntu-aws", getOptions()); return err }},
		{"no such payload type", "provisioningpayloads", func() error {
			_, err := payloads(testNamespace).Get(ctx, "e2e-ubuntu-aws-nope", getOptions())
			return err
		}},
		{"payload without suffix", "provisioningpayloads", func() error { _, err := payloads(testNamespace).Get(ctx, "e2e-ubuntu-aws", getOptions()); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.get()
			var status *apierrors.StatusError
			if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
				t.Fatalf("got %v, want 404 NotFound", err)
			}
			if d := status.ErrStatus.Details; d == nil || d.Group != "osm.k8c.io" || d.Kind != c.resource {
				t.Errorf("NotFound details %+v, want group osm.k8c.io kind %s", d, c.resource)
			}
		})
	}
	if out := kubectlFails(t, "get", "osc", "-n", testNamespace, "no-such-md"); !strings.Contains(out, "NotFound") {
		t.Errorf("kubectl get osc no-such-md: %s", out)
	}
}

// TestBrokenProfileFailsOnlyItsConfigs: an OSP whose template does not parse shows its
// error on the OSCs that use it; the list still works and other OSCs are fine.
func TestBrokenProfileFailsOnlyItsConfigs(t *testing.T) {
	list, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(testNamespace).List(testContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("a broken OSP breaks the list: %v", err)
	}
	for _, osc := range list.Items {
		broken := strings.HasPrefix(osc.Name, "e2e-broken-")
		msg := osc.Status.RenderError
		switch {
		case broken && !(strings.Contains(msg, "e2e-broken") && strings.Contains(msg, "noSuchTemplateFunction")):
			t.Errorf("%s: renderError %q should name the OSP and the bad function", osc.Name, msg)
		case !broken && msg != "":
			t.Errorf("%s: renderError %q from another MD's broken OSP", osc.Name, msg)
		}
	}
	out := kubectl(t, "get", "osc", "-n", testNamespace)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, name := range []string{"e2e-broken-aws", "e2e-broken-aws-2", "e2e-ubuntu-aws"} {
		row := strings.ToLower(rowOf(lines, name))
		if broken := strings.HasPrefix(name, "e2e-broken-"); broken != strings.Contains(row, "error") {
			t.Errorf("kubectl get osc: row %q should show an error: %v", row, broken)
		}
	}
}

func TestListSelectors(t *testing.T) {
	ctx := testContext(t)
	sel := fields.OneTermEqualSelector("metadata.name", "e2e-ubuntu-aws").String()
	list, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(testNamespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "e2e-ubuntu-aws" {
		t.Errorf("field selector %s: got %d items", sel, len(list.Items))
	}
	// OSCs carry their MachineDeployment's labels.
	byLabel, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(testNamespace).List(ctx, metav1.ListOptions{LabelSelector: "e2e/cloud=openstack"})
	if err != nil {
		t.Fatal(err)
	}
	if len(byLabel.Items) != 1 || byLabel.Items[0].Name != "e2e-ubuntu-openstack" {
		t.Errorf("label selector e2e/cloud=openstack: got %d items, want e2e-ubuntu-openstack", len(byLabel.Items))
	}
	all, err := env.osm.OsmV1alpha1().OperatingSystemConfigs("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Items) < 4 {
		t.Errorf("list across namespaces: %d items, want at least the 4 of %s", len(all.Items), testNamespace)
	}
}
