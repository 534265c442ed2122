package app

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/apiserver"
	"github.com/osm-apiserver/osm-apiserver/pkg/inputs"
	"github.com/osm-apiserver/osm-apiserver/pkg/options"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// watchFacts keeps the server's cluster facts and node options current (see
// factsWatch) and returns the channel that tells the syncer; nil if there is
// nothing to watch.
func (o *ServeOptions) watchFacts(server *apiserver.Server, client kubernetes.Interface, worker *rest.Config) (<-chan struct{}, error) {
	w, err := o.newFactsWatch(server.Resolver, func() {
		if err := server.Feed.TouchAll(server.Lister); err != nil {
			klog.ErrorS(err, "Failed to tell watchers that every MachineDeployment changed")
		}
	}, client, worker)
	if w == nil || err != nil {
		return nil, err
	}
	server.GenericAPIServer.AddPostStartHookOrDie("start-osm-facts-watch", func(ctx genericapiserver.PostStartHookContext) error {
		w.start(ctx)
		return nil
	})
	return w.changed, nil
}

// factsWatch watches kube-public/cluster-info (unless --cluster-info-kubeconfig)
// and the --node-registry-credentials-secret in the worker cluster; on a change
// it swaps the new facts into the resolver, calls touch (API watchers) and
// fires changed (the syncer).
type factsWatch struct {
	informers []cache.SharedIndexInformer
	refresher *inputs.Refresher
	changed   chan struct{}
}

// newFactsWatch returns nil if there is nothing to watch.
func (o *ServeOptions) newFactsWatch(resolver *inputs.Resolver, touch func(), client kubernetes.Interface, worker *rest.Config) (*factsWatch, error) {
	var clusterInfo, registrySecret cache.SharedIndexInformer
	if o.Cluster.ClusterInfoKubeconfig == "" {
		clusterInfo = named(client, metav1.NamespacePublic, inputs.ClusterInfoName).Core().V1().ConfigMaps().Informer()
	}
	var secretKey string
	if o.Node.RegistryCredentialsSecret != "" && !o.Node.RegistryCredentialsFromFile {
		namespace, name, err := o.Node.RegistryCredentialsSecretRef()
		if err != nil {
			return nil, err
		}
		registrySecret = named(client, namespace, name).Core().V1().Secrets().Informer()
		secretKey = namespace + "/" + name
	}
	w := &factsWatch{informers: nonNil(clusterInfo, registrySecret), changed: make(chan struct{}, 1)}
	if len(w.informers) == 0 {
		return nil, nil
	}
	w.refresher = &inputs.Refresher{
		Resolver: resolver,
		Compute: func() (inputs.Facts, error) {
			// Each part keeps its last good value on its own.
			f := resolver.Facts()
			var errs []error
			if clusterInfo != nil {
				cm, _ := stored[*corev1.ConfigMap](clusterInfo, metav1.NamespacePublic+"/"+inputs.ClusterInfoName)
				if c, err := inputs.ClusterInfoFrom(o.Cluster, cm, worker); err != nil {
					errs = append(errs, err)
				} else {
					f.Cluster = c
				}
			}
			if registrySecret != nil {
				if n, err := o.registryNodeOptions(registrySecret, secretKey); err != nil {
					errs = append(errs, err)
				} else {
					f.Node = n
				}
			}
			return f, errors.Join(errs...)
		},
		OnChange: func() {
			touch()
			select {
			case w.changed <- struct{}{}:
			default: // one pending signal re-syncs everything already
			}
		},
	}
	// Before every informer synced, a missing object only means not listed yet.
	refresh := func(any) {
		if w.synced() {
			w.refresher.Refresh()
		}
	}
	for _, i := range w.informers {
		if _, err := i.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: refresh, UpdateFunc: func(_, cur any) { refresh(cur) }, DeleteFunc: refresh,
		}); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// start runs the informers until ctx ends and refreshes once they synced,
// catching changes between the reads at start and the informers' lists.
func (w *factsWatch) start(ctx context.Context) {
	syncs := make([]cache.InformerSynced, 0, len(w.informers))
	for _, i := range w.informers {
		go i.RunWithContext(ctx)
		syncs = append(syncs, i.HasSynced)
	}
	go func() {
		if cache.WaitForNamedCacheSync("osm-facts", ctx.Done(), syncs...) {
			w.refresher.Refresh()
		}
	}()
}

func (w *factsWatch) synced() bool {
	for _, i := range w.informers {
		if !i.HasSynced() {
			return false
		}
	}
	return true
}

// registryNodeOptions returns the node options of the flags with the registry
// credentials of the Secret in informer.
func (o *ServeOptions) registryNodeOptions(informer cache.SharedIndexInformer, key string) (render.NodeOptions, error) {
	node, err := o.Node.NodeOptions()
	if err != nil {
		return node, err
	}
	secret, ok := stored[*corev1.Secret](informer, key)
	if !ok {
		return node, fmt.Errorf("--node-registry-credentials-secret %s: not found", key)
	}
	if node.RegistryCredentials, err = options.RegistryCredentialsFromSecret(secret); err != nil {
		return node, fmt.Errorf("--node-registry-credentials-secret %s: %w", key, err)
	}
	return node, nil
}

// named returns informers of the one object namespace/name.
func named(client kubernetes.Interface, namespace, name string) informers.SharedInformerFactory {
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	return informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = selector }))
}

func stored[T runtime.Object](informer cache.SharedIndexInformer, key string) (T, bool) {
	var zero T
	obj, exists, err := informer.GetStore().GetByKey(key)
	if err != nil || !exists {
		return zero, false
	}
	t, ok := obj.(T)
	return t, ok
}

func nonNil(informers ...cache.SharedIndexInformer) []cache.SharedIndexInformer {
	var out []cache.SharedIndexInformer
	for _, i := range informers {
		if i != nil {
			out = append(out, i)
		}
	}
	return out
}
