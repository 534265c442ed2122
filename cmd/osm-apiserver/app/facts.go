package app

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/apiserver"
	"github.com/osm-apiserver/osm-apiserver/pkg/inputs"
	"github.com/osm-apiserver/osm-apiserver/pkg/options"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// watchFacts keeps the server's cluster facts and node options current: it
// watches kube-public/cluster-info (unless --cluster-info-kubeconfig) and the
// --node-registry-credentials-secret in the worker cluster, and on a change
// swaps the new facts into the resolver, tells API watchers that every MD's
// output changed and fires the returned channel for the syncer. Nil if there
// is nothing to watch.
func (o *ServeOptions) watchFacts(server *apiserver.Server, client kubernetes.Interface, worker *rest.Config) (<-chan struct{}, error) {
	var clusterInfo, registrySecret cache.SharedIndexInformer
	if o.Cluster.ClusterInfoKubeconfig == "" {
		clusterInfo = namedInformer(client, "configmaps", &corev1.ConfigMap{}, metav1.NamespacePublic, inputs.ClusterInfoName)
	}
	var secretKey string
	if o.Node.RegistryCredentialsSecret != "" && !o.Node.RegistryCredentialsFromFile {
		namespace, name, err := o.Node.RegistryCredentialsSecretRef()
		if err != nil {
			return nil, err
		}
		registrySecret = namedInformer(client, "secrets", &corev1.Secret{}, namespace, name)
		secretKey = namespace + "/" + name
	}
	informers := nonNil(clusterInfo, registrySecret)
	if len(informers) == 0 {
		return nil, nil
	}
	changed := make(chan struct{}, 1)
	refresher := &inputs.Refresher{
		Resolver: server.Resolver,
		Compute: func() (inputs.Facts, error) {
			f := server.Resolver.Facts()
			var err error
			if clusterInfo != nil {
				cm, _ := stored[*corev1.ConfigMap](clusterInfo, metav1.NamespacePublic+"/"+inputs.ClusterInfoName)
				if f.Cluster, err = inputs.ClusterInfoFrom(o.Cluster, cm, worker); err != nil {
					return f, err
				}
			}
			if registrySecret != nil {
				f.Node, err = o.registryNodeOptions(registrySecret, secretKey)
			}
			return f, err
		},
		OnChange: func() {
			if err := server.Feed.TouchAll(server.Lister); err != nil {
				klog.ErrorS(err, "Failed to tell watchers that every MachineDeployment changed")
			}
			select {
			case changed <- struct{}{}:
			default: // one pending signal re-syncs everything already
			}
		},
	}
	synced := func() bool {
		for _, i := range informers {
			if !i.HasSynced() {
				return false
			}
		}
		return true
	}
	// Before every informer synced, a missing object only means not listed yet.
	refresh := func(any) {
		if synced() {
			refresher.Refresh()
		}
	}
	for _, i := range informers {
		if _, err := i.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: refresh, UpdateFunc: func(_, cur any) { refresh(cur) }, DeleteFunc: refresh,
		}); err != nil {
			return nil, err
		}
	}
	server.GenericAPIServer.AddPostStartHookOrDie("start-osm-facts-watch", func(ctx genericapiserver.PostStartHookContext) error {
		syncs := make([]cache.InformerSynced, 0, len(informers))
		for _, i := range informers {
			go i.RunWithContext(ctx)
			syncs = append(syncs, i.HasSynced)
		}
		go func() {
			// Catch changes between the reads at start and the informers' lists.
			if cache.WaitForNamedCacheSync("osm-facts", ctx.Done(), syncs...) {
				refresher.Refresh()
			}
		}()
		return nil
	})
	return changed, nil
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

// namedInformer watches the one object namespace/name.
func namedInformer(client kubernetes.Interface, resource string, obj runtime.Object, namespace, name string) cache.SharedIndexInformer {
	lw := cache.NewListWatchFromClient(client.CoreV1().RESTClient(), resource, namespace, fields.OneTermEqualSelector("metadata.name", name))
	return cache.NewSharedIndexInformer(lw, obj, 0, cache.Indexers{})
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
