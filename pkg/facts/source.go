package facts

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// Config says where the facts come from.
type Config struct {
	// Cluster holds the CA bundles of the flags and, when ServerURL and CACert
	// are set (--cluster-info-kubeconfig), the API server nodes reach. Otherwise
	// the API server comes from kube-public/cluster-info of the worker cluster,
	// or without one from kube-apiserver's endpoints (the EndpointSlice
	// default/kubernetes), or from Fallback (see chooseAPIServer). Tokens are
	// ignored: they are per MD.
	Cluster render.ClusterInfo
	// NodeAPIServer is the API server URL nodes are given whatever the
	// cluster says (--node-api-server; ValidateNodeAPIServer); "" for none.
	NodeAPIServer string
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
	// FallbackInCluster says Fallback's server is the kubernetes Service
	// (the in-cluster configuration, or a kubeconfig naming its ClusterIP),
	// which nodes cannot reach before they joined: never given to them.
	FallbackInCluster bool
}

// Source keeps the current facts. Build it with NewSource, subscribe with
// OnChange, then Start it.
type Source struct {
	cfg         Config
	clusterInfo cache.SharedIndexInformer // nil: the flags say
	endpoints   cache.SharedIndexInformer // nil: the flags or cluster-info say
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
	if cfg.NodeAPIServer != "" {
		if err := ValidateNodeAPIServer(cfg.NodeAPIServer); err != nil {
			return nil, fmt.Errorf("facts: --node-api-server: %w", err)
		}
	}
	if cfg.Cluster.ServerURL == "" || cfg.Cluster.CACert == "" {
		if cfg.Client == nil || cfg.Fallback == nil {
			return nil, errors.New("facts: the API server URL and CA, or a client of the cluster to read them from, are required")
		}
		s.clusterInfo = informers.NewConfigMap(cfg.Client, metav1.NamespacePublic, ClusterInfoName)
		if cfg.NodeAPIServer == "" {
			s.endpoints = informers.NewEndpointSlice(cfg.Client, metav1.NamespaceDefault, KubernetesService)
		}
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
		source := osm.APIServerFromClusterInfo // --cluster-info-kubeconfig
		if cfg.NodeAPIServer != "" {
			cfg.Cluster.ServerURL, source = cfg.NodeAPIServer, osm.APIServerFromFlag
		}
		f, err := newFacts(cfg.Cluster, cfg.Node, source)
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
	for _, i := range []cache.SharedIndexInformer{s.clusterInfo, s.endpoints, s.registry} {
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
		klog.InfoS("Cluster facts and node options ready", "server", f.Cluster.ServerURL, "serverSource", f.ServerSource)
		for _, fn := range s.onReady {
			fn()
		}
		return
	}
	klog.InfoS("Cluster facts or node options changed, rendering every MachineDeployment again", "server", f.Cluster.ServerURL, "serverSource", f.ServerSource)
	for _, fn := range s.onChange {
		fn()
	}
}

// compute returns the facts read from the informers, each part falling back
// to old's when it cannot be read; nil when a part has no value at all.
func (s *Source) compute(old *Facts) (*Facts, error) {
	cluster, node := s.cfg.Cluster, s.cfg.Node
	var source osm.APIServerSource
	var errs []error
	if s.clusterInfo != nil {
		server, ca, src, err := chooseAPIServer(s.apiServerInputs())
		switch {
		case err == nil:
			cluster.ServerURL, cluster.CACert, source = server, ca, src
		case old != nil:
			cluster.ServerURL, cluster.CACert, source = old.Cluster.ServerURL, old.Cluster.CACert, old.ServerSource
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
	f, err := newFacts(cluster, node, source)
	if err != nil {
		return nil, err
	}
	if s.registry != nil {
		f.withCredentialsVersion(secretVersion)
	}
	return f, errors.Join(errs...)
}

// apiServerInputs are the informers' objects and the flags the API server
// address is chosen from.
func (s *Source) apiServerInputs() apiServerInputs {
	in := apiServerInputs{flag: s.cfg.NodeAPIServer, kubeconfig: s.cfg.Fallback, inCluster: s.cfg.FallbackInCluster}
	in.clusterInfo, _ = stored[*corev1.ConfigMap](s.clusterInfo, metav1.NamespacePublic+"/"+ClusterInfoName)
	if s.endpoints != nil {
		for _, obj := range s.endpoints.GetStore().List() {
			if slice, ok := obj.(*discoveryv1.EndpointSlice); ok {
				in.slices = append(in.slices, slice)
			}
		}
	}
	return in
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
