package inputs

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	osplisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/options"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/rendercache"
)

// caRenderer writes the cluster's CA into the provisioning payload, as the
// bootstrap kubeconfig of real profiles does.
type caRenderer struct {
	calls atomic.Int64
}

func (c *caRenderer) Render(in render.Input) (*render.Result, error) {
	c.calls.Add(1)
	return &render.Result{
		Config:       osm.OperatingSystemConfigSpec{OSName: string(in.OSP.Spec.OSName)},
		Bootstrap:    render.Payload{Format: osm.PayloadFormatCloudInit, UserData: []byte("#cloud-config\n")},
		Provisioning: render.Payload{Format: osm.PayloadFormatCloudInit, UserData: []byte("#cloud-config\nca: " + in.Cluster.CACert)},
	}, nil
}

func newCAResolver(t *testing.T, ca string) (*Resolver, *caRenderer) {
	t.Helper()
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	renderer := &caRenderer{}
	r, err := New(Config{
		Namespace:   "kube-system",
		Profiles:    osplisters.NewOperatingSystemProfileLister(f.profiles),
		Cluster:     render.ClusterInfo{ServerURL: "https://127.0.0.1:6443", CACert: ca},
		Credentials: NewStaticCredentials(token, "getter-secret-value"),
		Renderer:    renderer,
		Cache:       rendercache.New(100),
	})
	if err != nil {
		t.Fatal(err)
	}
	return r, renderer
}

func provisioning(t *testing.T, r *Resolver) string {
	t.Helper()
	e := r.Render(context.Background(), md("osp-ubuntu"))
	if e.Err != nil {
		t.Fatal(e.Err)
	}
	return userData(t, e.Provisioning)
}

func TestSetFactsRerendersWithTheNewCA(t *testing.T) {
	r, renderer := newCAResolver(t, "ca-one")
	if got := provisioning(t, r); !strings.Contains(got, "ca: ca-one") {
		t.Fatalf("provisioning = %q, want ca-one", got)
	}
	f := r.Facts()
	f.Cluster.CACert = "ca-two"
	if changed, err := r.SetFacts(f); err != nil || !changed {
		t.Fatalf("SetFacts(ca-two) = %v, %v; want changed", changed, err)
	}
	if got := provisioning(t, r); !strings.Contains(got, "ca: ca-two") {
		t.Fatalf("after the CA changed, provisioning = %q, want ca-two (a stale render was served)", got)
	}
	if changed, err := r.SetFacts(f); err != nil || changed {
		t.Fatalf("SetFacts(same facts) = %v, %v; want unchanged", changed, err)
	}
	// Tokens are not facts: they come per MD from Credentials.
	f.Cluster.BootstrapToken = "other.token"
	if changed, _ := r.SetFacts(f); changed {
		t.Fatal("a cluster token changed the facts")
	}
	provisioning(t, r)
	if n := renderer.calls.Load(); n != 2 {
		t.Fatalf("renders = %d, want 2 (one per CA)", n)
	}
}

func TestRefresherKeepsTheLastGoodFacts(t *testing.T) {
	goodCM := func(ca string) *corev1.ConfigMap {
		return &corev1.ConfigMap{Data: map[string]string{"kubeconfig": `apiVersion: v1
kind: Config
clusters:
- name: ""
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: ` + ca}}
	}
	tests := []struct {
		name        string
		cm          *corev1.ConfigMap
		wantCA      string
		wantChanged bool
		wantErr     string
	}{
		// "bmV3LWNh" is base64 of "new-ca".
		{name: "new CA", cm: goodCM("bmV3LWNh"), wantCA: "new-ca", wantChanged: true},
		{name: "unparseable kubeconfig", cm: &corev1.ConfigMap{Data: map[string]string{"kubeconfig": "{not yaml"}}, wantCA: "old-ca", wantErr: "configmap kube-public/cluster-info: not a kubeconfig"},
		{name: "no CA", cm: goodCM(`""`), wantCA: "old-ca", wantErr: "no certificate-authority-data"},
		{name: "deleted, no CA in the kubeconfig", cm: nil, wantCA: "old-ca", wantErr: "no CA for nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newCAResolver(t, "old-ca")
			var changes int
			var computeErr error
			refresher := &Refresher{
				Resolver: r,
				Compute: func() (Facts, error) {
					f := r.Facts()
					c, err := ClusterInfoFrom(&options.ClusterFlags{}, tt.cm, &rest.Config{Host: "https://127.0.0.1:6443"})
					if computeErr = err; err == nil {
						f.Cluster = c
					}
					return f, err
				},
				OnChange: func() { changes++ },
			}
			refresher.Refresh()
			if tt.wantErr == "" && computeErr != nil || tt.wantErr != "" && (computeErr == nil || !strings.Contains(computeErr.Error(), tt.wantErr)) {
				t.Fatalf("error = %v, want %q", computeErr, tt.wantErr)
			}
			if got := r.Facts().Cluster.CACert; got != tt.wantCA {
				t.Errorf("CA = %q, want %q", got, tt.wantCA)
			}
			if got := provisioning(t, r); !strings.Contains(got, "ca: "+tt.wantCA) {
				t.Errorf("provisioning = %q, want %s", got, tt.wantCA)
			}
			if (changes == 1) != tt.wantChanged || changes > 1 {
				t.Errorf("OnChange ran %d times, want changed=%v", changes, tt.wantChanged)
			}
		})
	}
}

// Renders racing a swap use one set of facts for both the key and the
// output: once the swap is done, no render of the old CA is served.
func TestSetFactsRacingRenders(t *testing.T) {
	r, _ := newCAResolver(t, "ca-0")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				provisioning(t, r)
			}
		})
	}
	f := r.Facts()
	for _, ca := range []string{"ca-1", "ca-2", "ca-3"} {
		f.Cluster.CACert = ca
		if _, err := r.SetFacts(f); err != nil {
			t.Fatal(err)
		}
		if got := provisioning(t, r); !strings.Contains(got, "ca: "+ca) {
			t.Fatalf("provisioning = %q right after the swap to %s", got, ca)
		}
	}
	wg.Wait()
}
