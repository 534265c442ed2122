package informers

import (
	"context"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// newInformer returns an informer of obj fed by lw, without periodic resyncs,
// whose cache keeps what transform makes of each object.
func newInformer(lw cache.ListerWatcher, obj runtime.Object, indexers cache.Indexers, transform cache.TransformFunc) cache.SharedIndexInformer {
	i := cache.NewSharedIndexInformer(lw, obj, 0, indexers)
	// Setting a transform on an informer that has not started cannot fail.
	_ = i.SetTransform(transform)
	return i
}

var namespaceIndex = cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}

// NewMachineDeployments returns the informer of MachineDeployments fed by lw,
// with the indexes machines.NewLister reads (profiles of MDs that name no
// namespace are in profileNamespace).
func NewMachineDeployments(lw cache.ListerWatcher, profileNamespace string) cache.SharedIndexInformer {
	return newInformer(lw, &clusterv1alpha1.MachineDeployment{}, machines.MachineDeploymentIndexers(profileNamespace),
		machinecontroller.StripManagedFields)
}

// NewMachineSets returns the informer of MachineSets fed by lw, with the index
// machines.NewRevisionTemplates reads.
func NewMachineSets(lw cache.ListerWatcher) cache.SharedIndexInformer {
	return newInformer(lw, &clusterv1alpha1.MachineSet{}, machines.MachineSetIndexers(), machinecontroller.StripManagedFields)
}

// NewMachines returns the informer of Machines fed by lw, with the indexes
// machines.NewMachineReader reads.
func NewMachines(lw cache.ListerWatcher) cache.SharedIndexInformer {
	return newInformer(lw, &clusterv1alpha1.Machine{}, machines.MachineIndexers(), machinecontroller.StripManagedFields)
}

// NewNodes returns the informer of the Nodes' metadata fed by lw.
func NewNodes(lw cache.ListerWatcher) cache.SharedIndexInformer {
	return newInformer(lw, &metav1.PartialObjectMetadata{}, cache.Indexers{}, machinecontroller.StripManagedFields)
}

// NewProfiles returns the informer of every namespace's OperatingSystemProfiles.
func NewProfiles(client versioned.Interface, w Wrap) cache.SharedIndexInformer {
	profiles := client.OperatingsystemmanagerV1alpha1().OperatingSystemProfiles(metav1.NamespaceAll)
	lw := withSelector(client, "",
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return profiles.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return profiles.Watch(ctx, o)
		})
	return newInformer(wrap(lw, w), &ospv1alpha1.OperatingSystemProfile{}, namespaceIndex, machinecontroller.StripManagedFields)
}

// NewOverlays returns the informer of every namespace's
// OperatingSystemProfileOverlays (beside the profiles).
func NewOverlays(client versioned.Interface, w Wrap) cache.SharedIndexInformer {
	overlays := client.OverlaysV1alpha1().OperatingSystemProfileOverlays(metav1.NamespaceAll)
	lw := withSelector(client, "",
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return overlays.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return overlays.Watch(ctx, o)
		})
	return newInformer(wrap(lw, w), &overlaysv1alpha1.OperatingSystemProfileOverlay{}, namespaceIndex, machinecontroller.StripManagedFields)
}

// NewTokens returns the informers of our kubelet bootstrap tokens (in
// tokens.Namespace) and of the Secrets holding fetch tokens (in
// tokens.FetchNamespace), and only those (by label); bootstrap and fetch wrap
// their list-watches.
func NewTokens(client kubernetes.Interface, bootstrap, fetch Wrap) *tokens.Informer {
	fetchSelector := labels.SelectorFromSet(labels.Set{
		machinecontroller.ManagedByLabel: machinecontroller.ManagedByValue,
		machinecontroller.PurposeLabel:   tokens.PurposeFetch,
	}).String()
	return tokens.FromInformers(
		newInformer(wrap(secretListWatch(client, tokens.Namespace, machinecontroller.ManagedSelector().String()), bootstrap),
			&corev1.Secret{}, tokens.Indexers(), machinecontroller.StripManagedFields),
		newInformer(wrap(secretListWatch(client, tokens.FetchNamespace, fetchSelector), fetch),
			&corev1.Secret{}, namespaceIndex, machinecontroller.StripManagedFields))
}

// NewBootReports returns the informer of the metadata of the boot reports'
// Secrets: it never holds a log tail.
func NewBootReports(client metadata.Interface, w Wrap) *bootreports.Informer {
	lw := metadataListWatch(client, "secrets", bootreports.Namespace, bootreports.Selector("").String())
	return bootreports.FromInformer(newInformer(wrap(lw, w), &metav1.PartialObjectMetadata{}, bootreports.Indexers(),
		machinecontroller.StripManagedFields))
}
