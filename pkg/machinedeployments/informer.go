// Package machinedeployments watches machine-controller's MachineDeployments
// (cluster.k8s.io/v1alpha1) with a typed informer. machine-controller ships the
// types but no clientset, so the informer lists and watches through a REST client
// that decodes straight into the SDK's types: objects are converted once per
// event, not once per read.
package machinedeployments

import (
	"fmt"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Resource is the group and resource of MachineDeployments.
var Resource = clusterv1alpha1.Resource("machinedeployments")

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clusterv1alpha1.AddToScheme(scheme))
}

// NewListWatch returns a ListerWatcher of all MachineDeployments of the cluster
// that config points at.
func NewListWatch(config *rest.Config) (cache.ListerWatcher, error) {
	cfg := rest.CopyConfig(config)
	cfg.APIPath = "/apis"
	cfg.GroupVersion = &clusterv1alpha1.SchemeGroupVersion
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	// MachineDeployments are custom resources: kube-apiserver serves them as JSON only.
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.AcceptContentTypes = runtime.ContentTypeJSON
	client, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create a client for machinedeployments: %w", err)
	}
	return cache.NewListWatchFromClient(client, Resource.Resource, metav1.NamespaceAll, fields.Everything()), nil
}

// NewInformerFor returns an informer of MachineDeployments fed by lw. resync 0
// disables periodic resyncs.
func NewInformerFor(lw cache.ListerWatcher, resync time.Duration) cache.SharedIndexInformer {
	return cache.NewSharedIndexInformer(lw, &clusterv1alpha1.MachineDeployment{}, resync,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}
