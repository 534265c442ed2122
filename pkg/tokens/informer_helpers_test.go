package tokens

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// newTestInformer builds the token informers as pkg/informers.NewTokens does
// (which imports this package, so its tests cannot use it): our bootstrap
// tokens by label, and only the fetch tokens' Secrets in FetchNamespace.
func newTestInformer(client kubernetes.Interface) *Informer {
	fetch := labels.SelectorFromSet(labels.Set{
		machinecontroller.ManagedByLabel: machinecontroller.ManagedByValue,
		machinecontroller.PurposeLabel:   PurposeFetch,
	}).String()
	return FromInformers(
		cache.NewSharedIndexInformer(secretsOf(client, Namespace, machinecontroller.ManagedSelector().String()), &corev1.Secret{}, 0, Indexers()),
		cache.NewSharedIndexInformer(secretsOf(client, FetchNamespace, fetch), &corev1.Secret{}, 0, cache.Indexers{}))
}

func secretsOf(client kubernetes.Interface, namespace, selector string) cache.ListerWatcher {
	secrets := client.CoreV1().Secrets(namespace)
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			return secrets.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return secrets.Watch(ctx, o)
		},
	}, client)
}
