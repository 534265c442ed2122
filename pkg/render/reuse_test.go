package render_test

import (
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// TestRendererReuse checks that what a Renderer keeps between renders (parsed
// templates, memoized outputs, decoded providerSpecs, containerd files) never
// leaks into a render with other inputs: a shared Renderer, also used
// concurrently, gives exactly what a fresh one gives.
func TestRendererReuse(t *testing.T) {
	up := upstreamDir(t)
	casesDir := filepath.Join(up, "cases")
	entries, err := os.ReadDir(casesDir)
	if err != nil {
		t.Fatal(err)
	}
	var inputs []render.Input
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(casesDir, e.Name(), "args")); err != nil {
			continue
		}
		in := caseInput(t, filepath.Join(casesDir, e.Name()))
		inputs = append(inputs, in)

		renamed := in
		renamed.MachineDeployment = in.MachineDeployment.DeepCopy()
		renamed.MachineDeployment.Name += "-other"
		renamed.MachineDeployment.Annotations["v1.kubelet-config.machine-controller.kubermatic.io/MaxPods"] = "42"
		inputs = append(inputs, renamed)

		options := in
		options.Node.PauseImage = "registry.example.com/pause:3.10"
		options.Node.InsecureRegistries = nil
		options.Node.KubeletFeatureGates = map[string]bool{"A": true}
		options.Cluster.CloudInitGetterToken = "another-token"
		inputs = append(inputs, options)

		if in.OSP.Spec.OSName == "ubuntu" {
			azure := in
			azure.MachineDeployment = machineDeploymentFor(t, in.MachineDeployment, "ubuntu", "azure")
			inputs = append(inputs, azure)
		}
	}

	want := make([]*render.Result, len(inputs))
	for i, in := range inputs {
		if want[i], err = render.NewRenderer().Render(in); err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
	}

	shared := render.NewRenderer()
	var wg sync.WaitGroup
	for round := range 3 {
		for i := range inputs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				j := (i + round*7) % len(inputs)
				got, err := shared.Render(inputs[j])
				if err != nil {
					t.Errorf("input %d: %v", j, err)
					return
				}
				if !reflect.DeepEqual(got, want[j]) {
					t.Errorf("input %d: a shared Renderer's result differs from a fresh one's", j)
				}
			}()
		}
		wg.Wait()
	}
}
