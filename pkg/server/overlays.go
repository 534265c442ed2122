package server

import (
	"context"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed"
	"github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	overlaylisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/overlays"
)

// newOverlayInformer returns the informer of OperatingSystemProfileOverlays
// (management cluster, beside the profiles), whose lists and watches stream
// sees.
func newOverlayInformer(client versioned.Interface, stream *changefeed.Stream) cache.SharedIndexInformer {
	overlaysOf := client.OverlaysV1alpha1().OperatingSystemProfileOverlays
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return overlaysOf(metav1.NamespaceAll).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return overlaysOf(metav1.NamespaceAll).Watch(ctx, o)
		},
	}, client)
	i := cache.NewSharedIndexInformer(stream.Wrap(lw), &overlaysv1alpha1.OperatingSystemProfileOverlay{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	// Setting a transform on an informer that has not started cannot fail.
	_ = i.SetTransform(machinecontroller.StripManagedFields)
	return i
}

// newOverlaySelector selects overlays from the informer's cache.
func newOverlaySelector(informer cache.SharedIndexInformer, profileNamespace string) *overlays.Selector {
	return &overlays.Selector{
		ServerNamespace: profileNamespace,
		Overlays:        overlaylisters.NewOperatingSystemProfileOverlayLister(informer.GetIndexer()),
	}
}

// publishOverlays tells API watchers of the MDs an overlay selected or
// selects when it changes.
func (in apiInputs) publishOverlays() error {
	_, err := in.overlays.AddEventHandler(in.streams.overlays.Handler(changefeed.Overlays(
		func(o *overlaysv1alpha1.OperatingSystemProfileOverlay) ([]*clusterv1alpha1.MachineDeployment, error) {
			return in.selector.MachineDeployments(o, in.mds)
		})))
	return err
}
