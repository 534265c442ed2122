package tokens

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Informer watches the tokens osm-apiserver keeps, and only those (by label):
// the kubelet bootstrap tokens in kube-system and the Secrets holding fetch
// tokens in FetchNamespace, of the worker cluster. Every replica runs it: the
// payloads it serves embed the tokens.
type Informer struct {
	factories []informers.SharedInformerFactory
	bootstrap cache.SharedIndexInformer
	fetch     cache.SharedIndexInformer
}

// NewInformer returns the informer of our tokens in the cluster of client.
func NewInformer(client kubernetes.Interface) *Informer {
	bootstrap := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = machinecontroller.ManagedSelector().String()
		}))
	fetchSelector := labels.SelectorFromSet(labels.Set{
		machinecontroller.ManagedByLabel: machinecontroller.ManagedByValue,
		machinecontroller.PurposeLabel:   PurposeFetch,
	}).String()
	fetch := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(FetchNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = fetchSelector }))
	i := &Informer{
		factories: []informers.SharedInformerFactory{bootstrap, fetch},
		bootstrap: bootstrap.Core().V1().Secrets().Informer(),
		fetch:     fetch.Core().V1().Secrets().Informer(),
	}
	// Setting a transform on an informer that has not started cannot fail.
	_ = i.bootstrap.SetTransform(machinecontroller.StripManagedFields)
	_ = i.fetch.SetTransform(machinecontroller.StripManagedFields)
	return i
}

// Start runs the informer until stop closes.
func (i *Informer) Start(stop <-chan struct{}) {
	for _, f := range i.factories {
		f.Start(stop)
	}
}

// HasSynced says whether the informer has listed once.
func (i *Informer) HasSynced() bool {
	return i.bootstrap.HasSynced() && i.fetch.HasSynced()
}

// Lister reads the bootstrap tokens in kube-system.
func (i *Informer) Lister() corev1listers.SecretLister {
	return corev1listers.NewSecretLister(i.bootstrap.GetIndexer())
}

// FetchLister reads the Secrets holding fetch tokens.
func (i *Informer) FetchLister() corev1listers.SecretLister {
	return corev1listers.NewSecretLister(i.fetch.GetIndexer())
}

// Informer is the shared informer of the bootstrap tokens, for event handlers.
func (i *Informer) Informer() cache.SharedIndexInformer {
	return i.bootstrap
}

// FetchInformer is the shared informer of the fetch tokens, for event handlers.
func (i *Informer) FetchInformer() cache.SharedIndexInformer {
	return i.fetch
}

// OnValueChange calls f with the MachineDeployment whose tokens were created,
// changed in value or deleted: its payloads embed them. Extending a bootstrap
// token changes only its expiration, not the payloads, and calls nothing.
func (i *Informer) OnValueChange(f func(machinecontroller.Ref)) error {
	call := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if s, ok := obj.(*corev1.Secret); ok {
			if ref, ok := machinecontroller.Owner(s); ok {
				f(ref)
			}
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc: call,
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*corev1.Secret)
			n, ok2 := cur.(*corev1.Secret)
			if !ok1 || !ok2 || string(o.Data[keyTokenSecret]) != string(n.Data[keyTokenSecret]) ||
				string(o.Data[keyFetchToken]) != string(n.Data[keyFetchToken]) {
				call(cur)
			}
		},
		DeleteFunc: call,
	}
	for _, informer := range []cache.SharedIndexInformer{i.bootstrap, i.fetch} {
		if _, err := informer.AddEventHandler(handler); err != nil {
			return err
		}
	}
	return nil
}
