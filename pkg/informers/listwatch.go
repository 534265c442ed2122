package informers

import (
	"context"
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// machine-controller ships its types but no clientset, so its objects are
// listed and watched through a REST client that decodes straight into the
// SDK's types: objects are converted once per event, not once per read.

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clusterv1alpha1.AddToScheme(scheme))
}

// MachineDeploymentListWatch lists and watches every MachineDeployment of the
// cluster that config points at.
func MachineDeploymentListWatch(config *rest.Config) (cache.ListerWatcher, error) {
	return machineControllerListWatch(config, machinecontroller.MachineDeployments.Resource)
}

// MachineSetListWatch lists and watches every MachineSet.
func MachineSetListWatch(config *rest.Config) (cache.ListerWatcher, error) {
	return machineControllerListWatch(config, machinecontroller.MachineSets.Resource)
}

// MachineListWatch lists and watches every Machine.
func MachineListWatch(config *rest.Config) (cache.ListerWatcher, error) {
	return machineControllerListWatch(config, machinecontroller.Machines.Resource)
}

func machineControllerListWatch(config *rest.Config, resource string) (cache.ListerWatcher, error) {
	cfg := rest.CopyConfig(config)
	cfg.APIPath = "/apis"
	cfg.GroupVersion = &clusterv1alpha1.SchemeGroupVersion
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	// They are custom resources: kube-apiserver serves them as JSON only.
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.AcceptContentTypes = runtime.ContentTypeJSON
	client, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create a client for %s: %w", resource, err)
	}
	return cache.NewListWatchFromClient(client, resource, metav1.NamespaceAll, fields.Everything()), nil
}

// NodeListWatch lists and watches the metadata of every Node: whether a
// Machine joined is only a question of names.
func NodeListWatch(client metadata.Interface) cache.ListerWatcher {
	return metadataListWatch(client, "nodes", metav1.NamespaceAll, "")
}

// metadataListWatch lists and watches the metadata of resource (core group)
// in namespace that selector selects.
func metadataListWatch(client metadata.Interface, resource, namespace, selector string) cache.ListerWatcher {
	objects := client.Resource(corev1.SchemeGroupVersion.WithResource(resource)).Namespace(namespace)
	return withSelector(client, selector,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return objects.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return objects.Watch(ctx, o) })
}

// secretListWatch lists and watches the Secrets of namespace that selector
// selects: our own (payloads, tokens), never everyone's.
func secretListWatch(client kubernetes.Interface, namespace, selector string) cache.ListerWatcher {
	secrets := client.CoreV1().Secrets(namespace)
	return withSelector(client, selector,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return secrets.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return secrets.Watch(ctx, o) })
}

// withSelector is a list-watch of list and watch with the label selector
// (none if empty), using watch-list semantics where client supports them.
func withSelector(client any, selector string,
	list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFunc func(context.Context, metav1.ListOptions) (watch.Interface, error),
) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			if selector != "" {
				o.LabelSelector = selector
			}
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			if selector != "" {
				o.LabelSelector = selector
			}
			return watchFunc(ctx, o)
		},
	}, client)
}
