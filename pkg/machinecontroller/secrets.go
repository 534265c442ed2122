package machinecontroller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// NewSecretListWatch lists and watches the Secrets of namespace that selector
// selects: our own (payloads, tokens), never everyone's.
func NewSecretListWatch(client kubernetes.Interface, namespace, selector string) cache.ListerWatcher {
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
