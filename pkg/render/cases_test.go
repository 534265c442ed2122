package render_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// TestUpstreamCases renders every case of ../shared/upstream-osm/cases and
// compares payloads and the OperatingSystemConfig with upstream's semantically.
func TestUpstreamCases(t *testing.T) {
	casesDir := filepath.Join(upstreamDir(t), "cases")
	entries, err := os.ReadDir(casesDir)
	if err != nil {
		t.Fatal(err)
	}
	r := render.NewRenderer()
	ran := 0
	for _, e := range entries {
		dir := filepath.Join(casesDir, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "args")); err != nil {
			continue
		}
		ran++
		t.Run(e.Name(), func(t *testing.T) {
			in := caseInput(t, dir)
			res, err := r.Render(in)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			// Upstream names the kubelet's bootstrap kubeconfig Secret
			// "<ns>-<md>-…", which two MDs can share; ours is unique per MD.
			md := in.MachineDeployment
			upstreamNames = strings.NewReplacer(md.Namespace+"-"+md.Name+"-kubelet-bootstrap-config",
				machinecontroller.KubeletBootstrapSecretName(md.Name, md.Namespace))
			t.Cleanup(func() { upstreamNames = nil })
			for _, p := range []struct {
				name string
				got  render.Payload
			}{{"bootstrap", res.Bootstrap}, {"provisioning", res.Provisioning}} {
				want, err := os.ReadFile(filepath.Join(dir, "expected-"+p.name+".userdata"))
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range diffUserData(t, want, p.got) {
					t.Errorf("%s payload: %s", p.name, d)
				}
			}
			want, err := os.ReadFile(filepath.Join(dir, "expected-osc.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range diffOSC(t, want, res.Config) {
				t.Errorf("osc: %s", d)
			}
		})
	}
	if ran == 0 {
		t.Fatalf("no cases in %s", casesDir)
	}
}
