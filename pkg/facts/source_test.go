package facts

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

func clusterInfoCM(kubeconfig string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: ClusterInfoName},
		Data:       map[string]string{"kubeconfig": kubeconfig},
	}
}

// withCA is a cluster-info kubeconfig with a base64 CA ("" for none).
func withCA(ca string) string {
	return `apiVersion: v1
kind: Config
clusters:
- name: ""
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: ` + ca
}

func registrySecret(data string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "regcred"},
		Data:       map[string][]byte{"registry.example.com": []byte(data)},
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func start(t *testing.T, client *fake.Clientset, registry bool) (*Source, chan struct{}) {
	t.Helper()
	cfg := Config{Client: client, Fallback: &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("fallback-ca")}}}
	if registry {
		cfg.RegistrySecret = cache.ObjectName{Namespace: "kube-system", Name: "regcred"}
	}
	s, err := NewSource(cfg)
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 10)
	s.OnChange(func() { changed <- struct{}{} })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(ctx)
	return s, changed
}

// Changes of cluster-info and of the registry credentials Secret are
// published; bad values keep the last good part, each part on its own.
func TestSourceFollowsChanges(t *testing.T) {
	// Base64 of "ca-one" and "ca-two".
	client := machinecontrollertest.NewClientset(clusterInfoCM(withCA("Y2Etb25l")), registrySecret(`{"username":"one"}`))
	s, changed := start(t, client, true)
	waitFor(t, "the first facts", s.HasSynced)
	if f := s.Current(); f.Cluster.CACert != "ca-one" || f.Node.RegistryCredentials["registry.example.com"].Username != "one" {
		t.Fatalf("first facts %+v", f)
	}
	select {
	case <-changed:
		t.Fatal("the first facts were published as a change")
	default:
	}

	ctx := context.Background()
	configMaps := client.CoreV1().ConfigMaps(metav1.NamespacePublic)
	secrets := client.CoreV1().Secrets("kube-system")
	steps := []struct {
		name         string
		update       func() error
		wantCA, user string
		wantChanged  bool
		wantErr      string
	}{
		{name: "CA rotated", update: func() error {
			_, err := configMaps.Update(ctx, clusterInfoCM(withCA("Y2EtdHdv")), metav1.UpdateOptions{})
			return err
		}, wantCA: "ca-two", user: "one", wantChanged: true},
		{name: "CA removed", update: func() error {
			_, err := configMaps.Update(ctx, clusterInfoCM(withCA(`""`)), metav1.UpdateOptions{})
			return err
		}, wantCA: "ca-two", user: "one", wantErr: "no certificate-authority-data"},
		{name: "kubeconfig unparseable", update: func() error {
			_, err := configMaps.Update(ctx, clusterInfoCM("{not yaml"), metav1.UpdateOptions{})
			return err
		}, wantCA: "ca-two", user: "one", wantErr: "configmap kube-public/cluster-info: not a kubeconfig"},
		{name: "secret not JSON", update: func() error {
			_, err := secrets.Update(ctx, registrySecret("{"), metav1.UpdateOptions{})
			return err
		}, wantCA: "ca-two", user: "one", wantErr: "--node-registry-credentials-secret kube-system/regcred: key registry.example.com"},
		{name: "credentials changed", update: func() error {
			_, err := secrets.Update(ctx, registrySecret(`{"username":"two"}`), metav1.UpdateOptions{})
			return err
		}, wantCA: "ca-two", user: "two", wantChanged: true, wantErr: "configmap kube-public/cluster-info"},
		{name: "cluster-info deleted: the kubeconfig's server and CA", update: func() error {
			return configMaps.Delete(ctx, ClusterInfoName, metav1.DeleteOptions{})
		}, wantCA: "fallback-ca", user: "two", wantChanged: true},
	}
	for _, step := range steps {
		if err := step.update(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		select {
		case <-changed:
			if !step.wantChanged {
				t.Fatalf("%s: a change was published", step.name)
			}
		case <-time.After(time.Second):
			if step.wantChanged {
				t.Fatalf("%s: no change published within 1s", step.name)
			}
		}
		f := s.Current()
		if f.Cluster.CACert != step.wantCA || f.Node.RegistryCredentials["registry.example.com"].Username != step.user {
			t.Errorf("%s: CA %q user %q, want %q %q", step.name, f.Cluster.CACert,
				f.Node.RegistryCredentials["registry.example.com"].Username, step.wantCA, step.user)
		}
		if err := s.Err(); step.wantErr == "" && err != nil || step.wantErr != "" && (err == nil || !strings.Contains(err.Error(), step.wantErr)) {
			t.Errorf("%s: Err() = %v, want %q", step.name, err, step.wantErr)
		}
	}
}

// Without a good first value there are no facts: the server is not ready and
// says why, until the Secret appears.
func TestSourceWaitsForTheFirstGoodFacts(t *testing.T) {
	client := machinecontrollertest.NewClientset()
	cfg := Config{Client: client, Fallback: &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("fallback-ca")}},
		RegistrySecret: cache.ObjectName{Namespace: "kube-system", Name: "regcred"}}
	s, err := NewSource(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.Settled() {
		t.Fatal("settled before the informers listed")
	}
	changed, failed := make(chan struct{}, 10), make(chan error, 10)
	s.OnChange(func() { changed <- struct{}{} })
	s.OnFirstFailure(func() { failed <- s.Err() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(ctx)
	waitFor(t, "an error", func() bool { return s.Err() != nil })
	if !s.Settled() {
		t.Error("not settled after the first computation failed")
	}
	if err := <-failed; err == nil {
		t.Error("OnFirstFailure was called before Err said why")
	}
	if s.HasSynced() || s.Current() != nil {
		t.Fatal("facts without the registry credentials Secret")
	}
	if got := s.Err().Error(); !strings.Contains(got, "--node-registry-credentials-secret kube-system/regcred: not found") {
		t.Errorf("Err() = %q", got)
	}
	if _, err := client.CoreV1().Secrets("kube-system").Create(context.Background(), registrySecret(`{"username":"one"}`), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the facts", s.HasSynced)
	if f := s.Current(); f.Cluster.CACert != "fallback-ca" || f.Node.RegistryCredentials["registry.example.com"].Username != "one" || s.Err() != nil {
		t.Errorf("facts %+v, err %v", f, s.Err())
	}
	if len(changed) != 0 {
		t.Error("the first facts were published as a change")
	}
	if len(failed) != 0 {
		t.Error("OnFirstFailure was called more than once")
	}
}

func TestStaticFactsAndHash(t *testing.T) {
	cluster := render.ClusterInfo{ServerURL: "https://10.0.0.1:6443", CACert: "ca", BootstrapToken: "a.b"}
	s, err := NewSource(Config{Cluster: cluster})
	if err != nil {
		t.Fatal(err)
	}
	if !s.HasSynced() || !s.Settled() || s.Current().Cluster.BootstrapToken != "" {
		t.Fatalf("static facts %+v", s.Current())
	}
	other := cluster
	other.BootstrapToken = "c.d" // tokens are not facts
	f, err := newFacts(other, render.NodeOptions{}, osm.APIServerFromClusterInfo)
	if err != nil || f.Hash() != s.Current().Hash() {
		t.Errorf("hash with another token %q, want %q", f.Hash(), s.Current().Hash())
	}
	other.CACert = "ca-2"
	if f, _ := newFacts(other, render.NodeOptions{}, osm.APIServerFromClusterInfo); f.Hash() == s.Current().Hash() {
		t.Error("another CA has the same hash")
	}
	if f, _ := newFacts(cluster, render.NodeOptions{}, osm.APIServerFromFlag); f.Hash() == s.Current().Hash() || f.Version() == s.Current().Version() {
		t.Error("another source of the server has the same hash or version")
	}
	if _, err := NewSource(Config{}); err == nil {
		t.Error("no error without a server, a CA or a client")
	}
}

// OnReady is told of the first facts read from the cluster, once: every
// render was pending until then, and the API tells its watchers.
func TestSourceOnReady(t *testing.T) {
	client := machinecontrollertest.NewClientset(clusterInfoCM(withCA("Y2Etb25l")))
	s, err := NewSource(Config{Client: client, Fallback: &rest.Config{Host: "https://127.0.0.1:6443"}})
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan *Facts, 10)
	s.OnReady(func() { ready <- s.Current() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(ctx)
	waitFor(t, "the first facts", func() bool { return len(ready) == 1 })
	if f := <-ready; f == nil || f.Cluster.CACert != "ca-one" {
		t.Fatalf("OnReady saw %+v", f)
	}
	if _, err := client.CoreV1().ConfigMaps(metav1.NamespacePublic).Update(ctx, clusterInfoCM(withCA("Y2EtdHdv")), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new CA", func() bool { return s.Current().Cluster.CACert == "ca-two" })
	if len(ready) != 0 {
		t.Error("OnReady was called for a change")
	}
}
