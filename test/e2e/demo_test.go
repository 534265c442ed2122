package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
)

// TestDemoSamplesRender: what `make demo` shows works: the default OSPs, installed by
// osm-apiserver at start with the versions of artifacts/default-osps, and the sample
// MDs of hack/testdata/demo render without errors, in the expected format, and their
// bootstrap payloads fit the clouds' limits.
func TestDemoSamplesRender(t *testing.T) {
	ctx := testContext(t)
	kubectl(t, "apply", "--server-side", "-f", filepath.Join(env.repo, "hack/testdata/demo"))
	samples := map[string]osmv1alpha1.PayloadFormat{
		"ubuntu-aws":       osmv1alpha1.PayloadFormatCloudInit,
		"ubuntu-openstack": osmv1alpha1.PayloadFormatCloudInit,
		"flatcar-aws":      osmv1alpha1.PayloadFormatIgnition,
		"rockylinux-azure": osmv1alpha1.PayloadFormatCloudInit,
		"amzn2-aws":        osmv1alpha1.PayloadFormatCloudInit,
	}
	t.Cleanup(func() {
		for name := range samples {
			kubectl(t, "delete", "machinedeployment", "-n", "kube-system", name, "--wait=false")
		}
	})
	for name, format := range samples {
		t.Run(name, func(t *testing.T) {
			md := readObject(t, filepath.Join(env.repo, "hack/testdata/demo", name+".yaml"))
			profile := md.GetAnnotations()["k8c.io/operating-system-profile"]
			wantVersion := profileVersion(t, profile)
			var osc *osmv1alpha1.OperatingSystemConfig
			// A new MD renders once the syncer has created its tokens.
			eventually(t, 30*time.Second, func() error {
				var err error
				osc, err = env.osm.OsmV1alpha1().OperatingSystemConfigs("kube-system").Get(ctx, name, getOptions())
				if err == nil && osc.Status.RenderError != "" {
					err = fmt.Errorf("render error: %s", osc.Status.RenderError)
				}
				if err == nil && osc.Status.Pending != "" {
					err = fmt.Errorf("pending: %s", osc.Status.Pending)
				}
				return err
			})
			if osc.Status.Profile.Name != profile || osc.Status.Profile.Version != wantVersion {
				t.Errorf("rendered from %+v, want %s@%s", osc.Status.Profile, profile, wantVersion)
			}
			p, err := env.osm.OsmV1alpha1().ProvisioningPayloads("kube-system").Get(ctx, name+"-bootstrap", getOptions())
			if err != nil {
				t.Fatal(err)
			}
			if p.Spec.Format != format {
				t.Errorf("bootstrap format %q, want %q", p.Spec.Format, format)
			}
			if p.Spec.UserDataLimit > 0 && p.Spec.Size > p.Spec.UserDataLimit {
				t.Errorf("bootstrap payload of %d bytes exceeds the %d-byte limit", p.Spec.Size, p.Spec.UserDataLimit)
			}
		})
	}
}

// profileVersion returns spec.version of the default OSP name in artifacts/default-osps.
func profileVersion(t *testing.T, name string) string {
	t.Helper()
	osp := readObject(t, filepath.Join(env.repo, "artifacts/default-osps", name+".yaml"))
	v, _, _ := unstructured.NestedString(osp.Object, "spec", "version")
	if v == "" {
		t.Fatalf("artifacts/default-osps/%s.yaml has no spec.version", name)
	}
	return v
}
