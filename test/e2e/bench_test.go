package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The benchmarks list the OSCs of benchMDs MachineDeployments through kube-apiserver,
// as `kubectl get osc -A` and as a client-go LIST. "warm": every OSC is in the render
// cache. "cold": the OSP all of them use has just changed version, so every OSC
// renders anew (what a cold start costs, without restarting the server).
//
//	go test -count=1 -run '^$' -bench ListOSC1000 -benchtime 5x ./test/e2e
const (
	benchMDs       = 1000
	benchNamespace = "bench"
	benchOSP       = "bench-ubuntu"
)

var (
	benchOnce    sync.Once
	benchErr     error
	benchVersion int
)

func BenchmarkListOSC1000(b *testing.B) {
	benchOnce.Do(func() { benchErr = createBenchMDs() })
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	ctx := context.Background()
	clientGo := func(b *testing.B) {
		list, err := env.osm.OsmV1alpha1().OperatingSystemConfigs("").List(ctx, metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(list.Items) < benchMDs {
			b.Fatalf("%d OSCs, want at least %d", len(list.Items), benchMDs)
		}
	}
	kubectlGet := func(b *testing.B) {
		out := kubectl(b, "get", "osc", "-A", "--no-headers")
		if n := strings.Count(out, "\n"); n < benchMDs {
			b.Fatalf("kubectl get osc -A: %d rows, want at least %d", n, benchMDs)
		}
	}
	for _, c := range []struct {
		name string
		list func(*testing.B)
	}{{"client-go", clientGo}, {"kubectl", kubectlGet}} {
		b.Run(c.name+"/warm", func(b *testing.B) {
			c.list(b) // fills the cache
			b.ResetTimer()
			for range b.N {
				c.list(b)
			}
		})
		b.Run(c.name+"/cold", func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				bumpBenchOSP(ctx, b)
				b.StartTimer()
				c.list(b)
			}
		})
	}
}

// bumpBenchOSP changes the bench OSP's version and waits until osm-apiserver has seen it
// (one OSC shows it), so the next LIST renders every other OSC anew.
func bumpBenchOSP(ctx context.Context, b *testing.B) {
	benchVersion++
	version := fmt.Sprintf("v9.0.%d", benchVersion)
	patch(ctx, b, ospResource, "kube-system", benchOSP, `{"spec":{"version":"`+version+`"}}`)
	oscs := env.osm.OsmV1alpha1().OperatingSystemConfigs(benchNamespace)
	eventually(b, 30*time.Second, func() error {
		osc, err := oscs.Get(ctx, "bench-0", getOptions())
		if err != nil {
			return err
		}
		if osc.Status.Profile.Version != version {
			return fmt.Errorf("bench-0 rendered from %s, want %s", osc.Status.Profile.Version, version)
		}
		return nil
	})
}

// createBenchMDs creates the bench OSP (a copy of the default Ubuntu OSP, so renders
// cost what real ones do) and benchMDs MachineDeployments using it.
func createBenchMDs() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	osp, source, err := benchProfile()
	if err != nil {
		return err
	}
	osp.SetName(benchOSP)
	osp.SetNamespace("kube-system")
	unstructured.RemoveNestedField(osp.Object, "metadata", "resourceVersion")
	if _, err := env.dynamic.Resource(ospResource).Namespace("kube-system").Create(ctx, osp, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := kubectlCtx(ctx, "create", "namespace", benchNamespace); err != nil {
		return err
	}
	mds := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range mds {
				md := benchMD(i)
				if _, err := env.dynamic.Resource(mdResource).Namespace(benchNamespace).Create(ctx, md, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range benchMDs {
		mds <- i
	}
	close(mds)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	err = poll(ctx, 4*time.Minute, func() error {
		list, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(benchNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(list.Items) != benchMDs {
			return fmt.Errorf("%d OSCs in %s, want %d", len(list.Items), benchNamespace, benchMDs)
		}
		// New MDs render once the syncer has created their tokens.
		for _, osc := range list.Items {
			if osc.Status.RenderError+osc.Status.Pending != "" {
				return fmt.Errorf("%s: %s%s", osc.Name, osc.Status.RenderError, osc.Status.Pending)
			}
		}
		return nil
	})
	fmt.Fprintf(os.Stderr, "bench: %d MDs with OSP %s (from %s) rendered in %s\n", benchMDs, benchOSP, source, time.Since(start).Round(time.Millisecond))
	return err
}

// benchProfile returns the most realistic OSP at hand: the project's default Ubuntu
// OSP, else upstream's from ../shared, else the small e2e one.
func benchProfile() (*unstructured.Unstructured, string, error) {
	for _, path := range []string{
		filepath.Join(env.repo, "artifacts/default-osps/osp-ubuntu.yaml"),
		filepath.Join(env.repo, "../shared/upstream-osm/deploy/osps/default/osp-ubuntu.yaml"),
		filepath.Join(env.repo, "test/e2e/testdata/osp-e2e-ubuntu.yaml"),
	} {
		data, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			return nil, "", fmt.Errorf("%s: %w", path, err)
		}
		return obj, path, nil
	}
	return nil, "", fmt.Errorf("no OSP found for the benchmark")
}

func benchMD(i int) *unstructured.Unstructured {
	name := fmt.Sprintf("bench-%d", i)
	clouds := []string{"aws", "openstack", "azure", "gce"}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.k8s.io/v1alpha1",
		"kind":       "MachineDeployment",
		"metadata": map[string]any{
			"name": name,
			"annotations": map[string]any{
				"k8c.io/operating-system-profile":            benchOSP,
				"machinedeployment.clusters.k8s.io/revision": "1",
			},
		},
		"spec": map[string]any{
			"replicas": int64(1),
			"selector": map[string]any{"matchLabels": map[string]any{"machine": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"machine": name}},
				"spec": map[string]any{
					"providerSpec": map[string]any{"value": map[string]any{
						"sshPublicKeys":       []any{fmt.Sprintf("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBench%06d bench@osm", i)},
						"cloudProvider":       clouds[i%len(clouds)],
						"cloudProviderSpec":   map[string]any{},
						"operatingSystem":     "ubuntu",
						"operatingSystemSpec": map[string]any{"distUpgradeOnBoot": false},
					}},
					"versions": map[string]any{"kubelet": fmt.Sprintf("1.33.%d", i%10)},
				},
			},
		},
	}}
}
