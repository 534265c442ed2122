package app

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	osplisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/inputs"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/rendercache"
)

func clusterInfoCM(ca string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: inputs.ClusterInfoName},
		Data: map[string]string{"kubeconfig": `apiVersion: v1
kind: Config
clusters:
- name: ""
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: ` + ca},
	}
}

func registrySecret(data string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "regcred"},
		Data:       map[string][]byte{"registry.example.com": []byte(data)},
	}
}

// Changes of cluster-info and of the registry credentials Secret reach the
// resolver and fire the syncer's channel; bad values keep the last good facts.
func TestFactsWatch(t *testing.T) {
	// Base64 of "ca-one" and "ca-two".
	client := fake.NewClientset(clusterInfoCM("Y2Etb25l"), registrySecret(`{"username":"one"}`))
	resolver, err := inputs.New(inputs.Config{
		Profiles:    osplisters.NewOperatingSystemProfileLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})),
		Cluster:     render.ClusterInfo{ServerURL: "https://10.0.0.1:6443", CACert: "ca-one"},
		Credentials: inputs.NewStaticCredentials("", ""),
		Renderer:    render.NewRenderer(),
		Cache:       rendercache.New(10),
	})
	if err != nil {
		t.Fatal(err)
	}
	o := NewServeOptions()
	o.Node.RegistryCredentialsSecret = "kube-system/regcred"
	var touched int
	w, err := o.newFactsWatch(resolver, func() { touched++ }, client, &rest.Config{})
	if err != nil || w == nil {
		t.Fatalf("newFactsWatch = %v, %v", w, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.start(ctx)

	// The first refresh after sync also takes the Secret, read at start in serve.
	waitFor(t, "the registry credentials of the Secret", func() bool {
		return resolver.Facts().Node.RegistryCredentials["registry.example.com"].Username == "one"
	})
	<-w.changed

	configMaps := client.CoreV1().ConfigMaps(metav1.NamespacePublic)
	secrets := client.CoreV1().Secrets("kube-system")
	steps := []struct {
		name         string
		update       func() error
		wantCA, user string
		wantChanged  bool
	}{
		{name: "CA rotated", update: func() error {
			_, err := configMaps.Update(ctx, clusterInfoCM("Y2EtdHdv"), metav1.UpdateOptions{})
			return err
		},
			wantCA: "ca-two", user: "one", wantChanged: true},
		{name: "CA removed", update: func() error {
			_, err := configMaps.Update(ctx, clusterInfoCM(`""`), metav1.UpdateOptions{})
			return err
		},
			wantCA: "ca-two", user: "one"},
		{name: "secret not JSON", update: func() error { _, err := secrets.Update(ctx, registrySecret("{"), metav1.UpdateOptions{}); return err },
			wantCA: "ca-two", user: "one"},
		{name: "credentials changed", update: func() error {
			_, err := secrets.Update(ctx, registrySecret(`{"username":"two"}`), metav1.UpdateOptions{})
			return err
		}, wantCA: "ca-two", user: "two", wantChanged: true},
	}
	for _, s := range steps {
		if err := s.update(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		select {
		case <-w.changed:
			if !s.wantChanged {
				t.Fatalf("%s: the syncer was told of a change", s.name)
			}
		case <-time.After(time.Second):
			if s.wantChanged {
				t.Fatalf("%s: the syncer was not told within 1s", s.name)
			}
		}
		f := resolver.Facts()
		if f.Cluster.CACert != s.wantCA || f.Node.RegistryCredentials["registry.example.com"].Username != s.user {
			t.Errorf("%s: CA %q user %q, want %q %q", s.name, f.Cluster.CACert,
				f.Node.RegistryCredentials["registry.example.com"].Username, s.wantCA, s.user)
		}
	}
	if touched != 3 {
		t.Errorf("API watchers were told %d times, want 3", touched)
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
