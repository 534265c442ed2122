package facts

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// Config says where the facts come from.
type Config struct {
	// Cluster holds the CA bundles of the flags and, when ServerURL and CACert
	// are set (--cluster-info-kubeconfig), the API server nodes reach. Otherwise
	// the API server comes from kube-public/cluster-info of the worker cluster,
	// or without one from Fallback. Tokens are ignored: they are per MD.
	Cluster render.ClusterInfo
	// Node are the node options of the flags. With RegistrySecret set, its
	// registry credentials replace Node.RegistryCredentials.
	Node render.NodeOptions
	// RegistrySecret is the namespace and name of the registry credentials
	// Secret in the worker cluster (--node-registry-credentials-secret); empty
	// for none.
	RegistrySecret cache.ObjectName
	// Client reads the worker cluster; Fallback is its client configuration.
	Client   kubernetes.Interface
	Fallback *rest.Config
}

// Source keeps the current facts. Build it with NewSource, subscribe with
// OnChange, then Start it.
type Source struct {
	cfg         Config
	clusterInfo cache.SharedIndexInformer // nil: the flags say
	registry    cache.SharedIndexInformer // nil: no Secret
	current     atomic.Pointer[Facts]
	lastErr     atomic.Pointer[error]
	tried       atomic.Bool // a refresh ran after the informers synced
	mu          sync.Mutex  // serializes refresh
	onChange    []func()
	onReady     []func()
	onFailed    []func()
}

// NewSource returns the Source of cfg. Facts fixed by the flags alone are
// current at once.
func NewSource(cfg Config) (*Source, error) {
	s := &Source{cfg: cfg}
	if cfg.Cluster.ServerURL == "" || cfg.Cluster.CACert == "" {
		if cfg.Client == nil || cfg.Fallback == nil {
			return nil, errors.New("facts: the API server URL and CA, or a client of the cluster to read them from, are required")
		}
		s.clusterInfo = informers.NewConfigMap(cfg.Client, metav1.NamespacePublic, ClusterInfoName)
	}
	if cfg.RegistrySecret.Name != "" {
		if cfg.Client == nil {
			return nil, errors.New("facts: a client is required to read the registry credentials Secret")
		}
		s.registry = informers.NewSecret(cfg.Client, cfg.RegistrySecret.Namespace, cfg.RegistrySecret.Name)
	}
	for _, i := range s.informers() {
		if _, err := i.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { s.refreshIfSynced() },
			UpdateFunc: func(any, any) { s.refreshIfSynced() },
			DeleteFunc: func(any) { s.refreshIfSynced() },
		}); err != nil {
			return nil, err
		}
	}
	if len(s.informers()) == 0 {
		f, err := New(cfg.Cluster, cfg.Node)
		if err != nil {
			return nil, err
		}
		s.current.Store(f)
	}
	return s, nil
}

// OnChange registers f, called after new facts replaced others (not for the
// first facts). Register before Start.
func (s *Source) OnChange(f func()) {
	s.onChange = append(s.onChange, f)
}

// OnReady registers f, called after the first facts computed from the
// cluster (never when the flags fix them: they are there from the start).
// Register before Start.
func (s *Source) OnReady(f func()) {
	s.onReady = append(s.onReady, f)
}

// OnFirstFailure registers f, called when the first computation from the
// cluster ends without facts (Err says why). Register before Start.
func (s *Source) OnFirstFailure(f func()) {
	s.onFailed = append(s.onFailed, f)
}

// Start runs the informers until ctx ends and computes the facts once they
// have synced, and again on every change.
func (s *Source) Start(ctx context.Context) {
	informers := s.informers()
	synced := make([]cache.InformerSynced, 0, len(informers))
	for _, i := range informers {
		go i.RunWithContext(ctx)
		synced = append(synced, i.HasSynced)
	}
	if len(informers) == 0 {
		return
	}
	go func() {
		if cache.WaitForNamedCacheSync("osm-facts", ctx.Done(), synced...) {
			s.refresh()
		}
	}()
}

// Current returns the facts renders use now, nil before the first good ones.
func (s *Source) Current() *Facts {
	return s.current.Load()
}

// HasSynced says whether there are facts to render with.
func (s *Source) HasSynced() bool {
	return s.current.Load() != nil
}

// Settled says whether the facts are known or known to be missing: false
// only while the informers they are read from have not synced, when a
// missing object only means it was not listed yet.
func (s *Source) Settled() bool {
	return s.current.Load() != nil || s.tried.Load()
}

// Err returns why the last computation failed, nil if it did not. Until the
// first facts are good, it is why there are none.
func (s *Source) Err() error {
	if err := s.lastErr.Load(); err != nil {
		return *err
	}
	return nil
}

func (s *Source) informers() []cache.SharedIndexInformer {
	var out []cache.SharedIndexInformer
	for _, i := range []cache.SharedIndexInformer{s.clusterInfo, s.registry} {
		if i != nil {
			out = append(out, i)
		}
	}
	return out
}

// refreshIfSynced refreshes on an informer event; before every informer has
// synced, a missing object only means it was not listed yet.
func (s *Source) refreshIfSynced() {
	for _, i := range s.informers() {
		if !i.HasSynced() {
			return
		}
	}
	s.refresh()
}

// refresh computes the facts; each part that cannot be read keeps its last
// good value. Calls are serialized, so the last computed facts win.
func (s *Source) refresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.current.Load()
	f, err := s.compute(old)
	if err != nil {
		s.lastErr.Store(&err)
		klog.ErrorS(err, "Keeping the last good cluster facts or node options")
	} else {
		s.lastErr.Store(nil)
	}
	if first := !s.tried.Swap(true); first && f == nil {
		for _, fn := range s.onFailed {
			fn()
		}
	}
	if f == nil || old != nil && f.Hash() == old.Hash() && f.Version() == old.Version() {
		return
	}
	s.current.Store(f)
	if old == nil {
		klog.InfoS("Cluster facts and node options ready", "server", f.Cluster.ServerURL)
		for _, fn := range s.onReady {
			fn()
		}
		return
	}
	klog.InfoS("Cluster facts or node options changed, rendering every MachineDeployment again", "server", f.Cluster.ServerURL)
	for _, fn := range s.onChange {
		fn()
	}
}

// compute returns the facts read from the informers, each part falling back
// to old's when it cannot be read; nil when a part has no value at all.
func (s *Source) compute(old *Facts) (*Facts, error) {
	cluster, node := s.cfg.Cluster, s.cfg.Node
	var errs []error
	if s.clusterInfo != nil {
		cm, _ := stored[*corev1.ConfigMap](s.clusterInfo, metav1.NamespacePublic+"/"+ClusterInfoName)
		server, ca, err := serverAndCAOf(cm, s.cfg.Fallback)
		switch {
		case err == nil:
			cluster.ServerURL, cluster.CACert = server, ca
		case old != nil:
			cluster.ServerURL, cluster.CACert = old.Cluster.ServerURL, old.Cluster.CACert
			errs = append(errs, err)
		default:
			return nil, err
		}
	}
	secretVersion := ""
	if s.registry != nil {
		creds, rv, err := s.registryCredentials()
		switch {
		case err == nil:
			node.RegistryCredentials, secretVersion = creds, rv
		case old != nil:
			node.RegistryCredentials = old.Node.RegistryCredentials
			secretVersion = old.credentialsVersion
			errs = append(errs, err)
		default:
			return nil, err
		}
	}
	f, err := New(cluster, node)
	if err != nil {
		return nil, err
	}
	if s.registry != nil {
		f.withCredentialsVersion(secretVersion)
	}
	return f, errors.Join(errs...)
}

func (s *Source) registryCredentials() (map[string]render.RegistryAuth, string, error) {
	key := s.cfg.RegistrySecret.String()
	secret, ok := stored[*corev1.Secret](s.registry, key)
	if !ok {
		return nil, "", fmt.Errorf("--node-registry-credentials-secret %s: not found", key)
	}
	creds, err := RegistryCredentialsFromSecret(secret)
	if err != nil {
		return nil, "", fmt.Errorf("--node-registry-credentials-secret %s: %w", key, err)
	}
	return creds, secret.ResourceVersion, nil
}

func stored[T any](informer cache.SharedIndexInformer, key string) (T, bool) {
	var zero T
	obj, exists, err := informer.GetStore().GetByKey(key)
	if err != nil || !exists {
		return zero, false
	}
	t, ok := obj.(T)
	return t, ok
}
