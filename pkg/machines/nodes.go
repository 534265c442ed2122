package machines

import (
	"context"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Whether a Machine has joined is whether its Node exists: machine-controller
// sets status.nodeRef once it matched the Node to the Machine, and before
// that (or without machine-controller) a Node of one of
// machinecontroller.NodeNames says so.
// Only Nodes' names matter, so their informer holds metadata only.

// NewNodeListWatch lists and watches the metadata of all Nodes.
func NewNodeListWatch(client metadata.Interface) cache.ListerWatcher {
	nodes := client.Resource(corev1.SchemeGroupVersion.WithResource("nodes"))
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return nodes.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return nodes.Watch(ctx, o)
		},
	}, client)
}

// NewNodeInformer returns an informer of the Nodes' metadata fed by lw,
// without managed fields.
func NewNodeInformer(lw cache.ListerWatcher) cache.SharedIndexInformer {
	i := cache.NewSharedIndexInformer(lw, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	// Setting a transform on an informer that has not started cannot fail.
	_ = i.SetTransform(machinecontroller.StripManagedFields)
	return i
}

// NodeOf returns the name of m's Node: status.nodeRef, or the first of
// machinecontroller.NodeNames(m) that a Node of the node informer has. ok is
// false while m has no Node.
func (r *MachineReader) NodeOf(m *clusterv1alpha1.Machine) (name string, ok bool) {
	if m.Status.NodeRef != nil && m.Status.NodeRef.Name != "" {
		return m.Status.NodeRef.Name, true
	}
	if r.nodes == nil {
		return "", false
	}
	for _, n := range machinecontroller.NodeNames(m) {
		if _, exists, err := r.nodes.GetByKey(n); err == nil && exists {
			return n, true
		}
	}
	return "", false
}
