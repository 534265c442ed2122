package resolve

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// caRenderer writes the cluster's CA into the provisioning payload, as the
// bootstrap kubeconfig of real profiles does.
type caRenderer struct {
	calls atomic.Int64
}

func (c *caRenderer) Render(in render.Input) (*render.Result, error) {
	if !in.View {
		c.calls.Add(1)
	}
	return &render.Result{
		Config:       osm.OperatingSystemConfigSpec{OSName: string(in.OSP.Spec.OSName)},
		Bootstrap:    render.Payload{Format: osm.PayloadFormatCloudInit, UserData: []byte("#cloud-config\n")},
		Provisioning: render.Payload{Format: osm.PayloadFormatCloudInit, UserData: []byte("#cloud-config\nca: " + in.Cluster.CACert)},
	}, nil
}

func newCAResolver(t *testing.T, ca string) (*fixture, *caRenderer) {
	t.Helper()
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	renderer := &caRenderer{}
	f.resolver.cfg.Render = renderer.Render
	f.facts.set(t, render.ClusterInfo{ServerURL: "https://127.0.0.1:6443", CACert: ca}, render.NodeOptions{})
	return f, renderer
}

func provisioning(t *testing.T, f *fixture) string {
	t.Helper()
	e := f.resolver.Resolve(context.Background(), md("osp-ubuntu"))
	if e.Err != nil {
		t.Fatal(e.Err)
	}
	return userData(t, e.Provisioning)
}

func TestNewFactsRerenderWithTheNewCA(t *testing.T) {
	f, renderer := newCAResolver(t, "ca-one")
	if got := provisioning(t, f); !strings.Contains(got, "ca: ca-one") {
		t.Fatalf("provisioning = %q, want ca-one", got)
	}
	f.facts.set(t, render.ClusterInfo{ServerURL: "https://127.0.0.1:6443", CACert: "ca-two"}, render.NodeOptions{})
	if got := provisioning(t, f); !strings.Contains(got, "ca: ca-two") {
		t.Fatalf("after the CA changed, provisioning = %q, want ca-two (a stale render was served)", got)
	}
	// Equal facts are the same key.
	f.facts.set(t, render.ClusterInfo{ServerURL: "https://127.0.0.1:6443", CACert: "ca-two"}, render.NodeOptions{})
	provisioning(t, f)
	if n := renderer.calls.Load(); n != 2 {
		t.Fatalf("renders = %d, want 2 (one per CA)", n)
	}
}

// Renders racing a swap use one set of facts for both the key and the
// output: once the swap is done, no render of the old CA is served.
func TestNewFactsRacingRenders(t *testing.T) {
	f, _ := newCAResolver(t, "ca-0")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				provisioning(t, f)
			}
		})
	}
	for _, ca := range []string{"ca-1", "ca-2", "ca-3"} {
		f.facts.set(t, render.ClusterInfo{ServerURL: "https://127.0.0.1:6443", CACert: ca}, render.NodeOptions{})
		if got := provisioning(t, f); !strings.Contains(got, "ca: "+ca) {
			t.Fatalf("provisioning = %q right after the swap to %s", got, ca)
		}
	}
	wg.Wait()
}
