package tokens

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Informer watches the tokens osm-apiserver keeps, and only those (by label),
// in kube-system of the worker cluster. Every replica runs it: the payloads it
// serves embed the tokens.
type Informer struct {
	informer cache.SharedIndexInformer
}

// NewInformer returns the informer of our tokens in the cluster of client;
// wrap, when given, wraps its ListerWatcher (the API's change feed watches
// what the informer lists and watches).
func NewInformer(client kubernetes.Interface, wrap ...func(cache.ListerWatcher) cache.ListerWatcher) *Informer {
	selector := machinecontroller.ManagedSelector().String()
	var lw cache.ListerWatcher = cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			return client.CoreV1().Secrets(Namespace).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return client.CoreV1().Secrets(Namespace).Watch(ctx, o)
		},
	}, client)
	for _, w := range wrap {
		lw = w(lw)
	}
	i := cache.NewSharedIndexInformer(lw, &corev1.Secret{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	// Setting a transform on an informer that has not started cannot fail.
	_ = i.SetTransform(machinecontroller.StripManagedFields)
	return &Informer{informer: i}
}

// Start runs the informer until stop closes.
func (i *Informer) Start(stop <-chan struct{}) {
	go i.informer.Run(stop)
}

// HasSynced says whether the informer has listed once.
func (i *Informer) HasSynced() bool {
	return i.informer.HasSynced()
}

// Lister reads the tokens.
func (i *Informer) Lister() corev1listers.SecretLister {
	return corev1listers.NewSecretLister(i.informer.GetIndexer())
}

// Informer is the shared informer, for event handlers.
func (i *Informer) Informer() cache.SharedIndexInformer {
	return i.informer
}

// OnValueChange calls f with the MachineDeployment whose tokens were created,
// changed in value or deleted: its payloads embed them. Extending a token
// changes only its expiration, not the payloads, and calls nothing.
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
	_, err := i.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: call,
		UpdateFunc: func(old, cur any) {
			if ValueChanged(old, cur) {
				call(cur)
			}
		},
		DeleteFunc: call,
	})
	return err
}

// ValueChanged reports whether an update of a token Secret from old to cur
// changes the token (the payloads embed it), not only its expiration.
func ValueChanged(old, cur any) bool {
	o, ok1 := old.(*corev1.Secret)
	n, ok2 := cur.(*corev1.Secret)
	return !ok1 || !ok2 || string(o.Data[keyTokenSecret]) != string(n.Data[keyTokenSecret])
}
