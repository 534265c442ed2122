package e2e

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestDiscoveryListsTheGroup(t *testing.T) {
	groups, err := env.kube.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(groups.Groups, func(g metav1.APIGroup) bool { return g.Name == "osm.k8c.io" })
	if i < 0 {
		t.Fatalf("discovery does not list group osm.k8c.io")
	}
	if got := groups.Groups[i].PreferredVersion.GroupVersion; got != "osm.k8c.io/v1alpha1" {
		t.Errorf("preferred version of osm.k8c.io = %q, want osm.k8c.io/v1alpha1", got)
	}

	list, err := env.kube.Discovery().ServerResourcesForGroupVersion("osm.k8c.io/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		kind       string
		shortNames []string
	}{
		"operatingsystemconfigs": {kind: "OperatingSystemConfig", shortNames: []string{"osc"}},
		"provisioningpayloads":   {kind: "ProvisioningPayload"},
		"bootreports":            {kind: "BootReport"},
	}
	seen := map[string]bool{}
	for _, r := range list.APIResources {
		if r.Name == "bootreports/step" {
			// Where nodes post step records: create only.
			if !slices.Equal(r.Verbs, []string{"create"}) || r.Kind != "BootStep" {
				t.Errorf("%s: verbs %v, kind %s; want create of BootStep", r.Name, r.Verbs, r.Kind)
			}
			seen[r.Name] = true
			continue
		}
		w, ok := want[r.Name]
		if !ok {
			continue // subresources and future resources
		}
		seen[r.Name] = true
		if !r.Namespaced || r.Kind != w.kind {
			t.Errorf("%s: namespaced=%v kind=%q, want namespaced %s", r.Name, r.Namespaced, r.Kind, w.kind)
		}
		for _, s := range w.shortNames {
			if !slices.Contains(r.ShortNames, s) {
				t.Errorf("%s: short names %v lack %q", r.Name, r.ShortNames, s)
			}
		}
		// Read-only: advertising a write verb would be a lie (writes answer 405).
		verbs := slices.Sorted(slices.Values(r.Verbs))
		if !slices.Equal(verbs, []string{"get", "list", "watch"}) {
			t.Errorf("%s: verbs %v, want [get list watch]", r.Name, verbs)
		}
	}
	if !seen["bootreports/step"] {
		t.Error("discovery of osm.k8c.io/v1alpha1 lacks bootreports/step")
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("discovery of osm.k8c.io/v1alpha1 lacks %s", name)
		}
	}

	out := kubectl(t, "api-resources", "--api-group", "osm.k8c.io")
	for _, s := range []string{"operatingsystemconfigs", "osc", "provisioningpayloads", "bootreports"} {
		if !strings.Contains(out, s) {
			t.Errorf("kubectl api-resources lacks %q:\n%s", s, out)
		}
	}
}

func TestAPIServiceIsAvailable(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	obj, err := env.dynamic.Resource(gvr).Get(testContext(t), "v1alpha1.osm.k8c.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if skip, _, _ := unstructured.NestedBool(obj.Object, "spec", "insecureSkipTLSVerify"); skip {
		t.Error("APIService skips TLS verification")
	}
	if ca, _, _ := unstructured.NestedString(obj.Object, "spec", "caBundle"); ca == "" {
		t.Error("APIService has no caBundle")
	}
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		c, _ := c.(map[string]any)
		if c["type"] == "Available" {
			if c["status"] != "True" {
				t.Errorf("APIService Available=%v: %v: %v", c["status"], c["reason"], c["message"])
			}
			return
		}
	}
	t.Errorf("APIService has no Available condition: %v", conditions)
}
