package server

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	ktesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	fakeosp "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
)

// heldListWatch lists only once released.
type heldListWatch struct {
	inner   cache.ListerWatcherWithContext
	release <-chan struct{}
}

func (l heldListWatch) List(o metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), o)
}

func (l heldListWatch) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), o)
}

func (l heldListWatch) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	<-l.release
	return l.inner.ListWithContext(ctx, o)
}

func (l heldListWatch) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return l.inner.WatchWithContext(ctx, o)
}

func (heldListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// TestReadyzWaitsForEveryInformer: while any informer the API renders from
// has not listed — the token informer included, without which every OSC is
// Pending and every payload 503 — /readyz says which and the server is not
// ready; once it lists, the server is.
func TestReadyzWaitsForEveryInformer(t *testing.T) {
	hold := map[string]func(cfg *Config, release <-chan struct{}){
		"machinedeployments": func(cfg *Config, release <-chan struct{}) {
			cfg.Clusters.MachineDeployments = heldListWatch{cache.ToListerWatcherWithContext(cfg.Clusters.MachineDeployments), release}
		},
		"machinesets": func(cfg *Config, release <-chan struct{}) {
			cfg.Clusters.MachineSets = heldListWatch{cache.ToListerWatcherWithContext(cfg.Clusters.MachineSets), release}
		},
		"machines": func(cfg *Config, release <-chan struct{}) {
			cfg.Clusters.Machines = heldListWatch{cache.ToListerWatcherWithContext(cfg.Clusters.Machines), release}
		},
		"nodes": func(cfg *Config, release <-chan struct{}) {
			cfg.Clusters.Nodes = heldListWatch{cache.ToListerWatcherWithContext(cfg.Clusters.Nodes), release}
		},
		"operatingsystemprofiles": func(cfg *Config, release <-chan struct{}) {
			cfg.Clusters.Profiles.(*fakeosp.Clientset).PrependReactor("list", "operatingsystemprofiles", func(ktesting.Action) (bool, runtime.Object, error) {
				<-release
				return false, nil, nil
			})
		},
		"boot-reports": func(cfg *Config, release <-chan struct{}) {
			cfg.Clusters.Metadata.(*metadatafake.FakeMetadataClient).PrependReactor("list", "secrets", func(ktesting.Action) (bool, runtime.Object, error) {
				<-release
				return false, nil, nil
			})
		},
		"tokens": func(cfg *Config, release <-chan struct{}) {
			cfg.Clusters.Worker.(*fake.Clientset).PrependReactor("list", "secrets", func(a ktesting.Action) (bool, runtime.Object, error) {
				if a.GetNamespace() == "kube-system" {
					<-release
				}
				return false, nil, nil
			})
		},
	}
	for name, held := range hold {
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			md := machinecontrollertest.MD("kube-system", "workers", "osp-ubuntu", nil)
			client, _ := runServer(t, fakeRender, func(cfg *Config) { held(cfg, release) }, md)
			var once sync.Once
			open := func() { once.Do(func() { close(release) }) }
			t.Cleanup(open) // before the server stops
			rest := discovery.NewDiscoveryClientForConfigOrDie(client).RESTClient()
			check := func(ctx context.Context) error {
				_, err := rest.Get().AbsPath("/readyz/osm-informers-and-facts").DoRaw(ctx)
				return err
			}
			// The fake clientset serves one call at a time, so a held list
			// may hold up other informers' lists too: the held one must be named.
			want := "informers not synced yet: "
			var last error
			err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
				last = check(ctx)
				return last != nil && strings.Contains(last.Error(), want) && unsyncedNamed(last.Error(), name), nil
			})
			if err != nil {
				t.Fatalf("readyz while %s cannot list: %v, want %q naming it", name, last, want)
			}
			if body, err := rest.Get().AbsPath("/readyz").DoRaw(context.Background()); err == nil {
				t.Fatalf("/readyz answers %q while %s cannot list", body, name)
			}
			open()
			err = wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
				last = check(ctx)
				return last == nil, nil
			})
			if err != nil {
				t.Fatalf("not ready after %s listed: %v", name, last)
			}
		})
	}
}

// TestGetBeforeInformersListed: right after a start, before the informers
// have listed, a GET of an OSC whose MD exists is 503 with Retry-After (the
// client retries), not 404 from an empty cache.
func TestGetBeforeInformersListed(t *testing.T) {
	release := make(chan struct{})
	md := machinecontrollertest.MD("kube-system", "workers", "osp-ubuntu", nil)
	client, _ := runServer(t, fakeRender, func(cfg *Config) {
		cfg.Clusters.MachineDeployments = heldListWatch{cache.ToListerWatcherWithContext(cfg.Clusters.MachineDeployments), release}
	}, md)
	t.Cleanup(func() { close(release) })
	// Without client-go's own retries of a 503.
	get := versioned.NewForConfigOrDie(client).OsmV1alpha1().RESTClient().Get().MaxRetries(0).
		Namespace("kube-system").Resource("operatingsystemconfigs").Name("workers")
	var err error
	// Until the server serves at all (its post-start hook), a GET fails otherwise.
	_ = wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		err = get.Do(ctx).Error()
		return apierrors.IsServiceUnavailable(err) || apierrors.IsNotFound(err), nil
	})
	if !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("GET before the MachineDeployments are listed: %v, want 503", err)
	}
	if seconds, ok := apierrors.SuggestsClientDelay(err); !ok || seconds < 1 {
		t.Errorf("503 without Retry-After: %v", err)
	}
}

// unsyncedNamed says whether the readyz message lists informer name as not synced.
func unsyncedNamed(msg, name string) bool {
	_, list, ok := strings.Cut(msg, "informers not synced yet: ")
	if !ok {
		return false
	}
	names := strings.FieldsFunc(list, func(r rune) bool { return r != '-' && (r < 'a' || r > 'z') })
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

type caBundle []byte

func (c caBundle) CurrentCABundleContent() []byte { return c }

// A replica is not ready while it cannot verify kube-apiserver's front
// proxy: proxied requests would be system:anonymous.
func TestNotReadyWithoutTheFrontProxyCA(t *testing.T) {
	if err := (frontProxyCA{ca: caBundle(nil)}).Check(nil); err == nil || !strings.Contains(err.Error(), "front proxy") {
		t.Errorf("without the CA: %v, want not ready", err)
	}
	if err := (frontProxyCA{ca: caBundle("-----BEGIN CERTIFICATE-----")}).Check(nil); err != nil {
		t.Errorf("with the CA: %v", err)
	}
}
