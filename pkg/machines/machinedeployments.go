package machines

import (
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// machine-controller ships the MachineDeployment types but no clientset, so the
// informers list and watch through a REST client that decodes straight into
// the SDK's types: objects are converted once per event, not once per read.

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clusterv1alpha1.AddToScheme(scheme))
}

// NewMachineDeploymentListWatch returns a ListerWatcher of all
// MachineDeployments of the cluster that config points at.
func NewMachineDeploymentListWatch(config *rest.Config) (cache.ListerWatcher, error) {
	return newListWatch(config, machinecontroller.MachineDeployments.Resource)
}

func newListWatch(config *rest.Config, resource string) (cache.ListerWatcher, error) {
	cfg := rest.CopyConfig(config)
	cfg.APIPath = "/apis"
	cfg.GroupVersion = &clusterv1alpha1.SchemeGroupVersion
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	// MachineDeployments are custom resources: kube-apiserver serves them as JSON only.
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.AcceptContentTypes = runtime.ContentTypeJSON
	client, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create a client for %s: %w", resource, err)
	}
	return cache.NewListWatchFromClient(client, resource, metav1.NamespaceAll, fields.Everything()), nil
}

// MachineDeploymentIndexers are the indexes of a MachineDeployment informer
// that Lister reads: by namespace, by profile (profiles of MDs that name no
// namespace are in profileNamespace) and by the prefix of their dictated
// Secret names.
func MachineDeploymentIndexers(profileNamespace string) cache.Indexers {
	return cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		ProfileIndex:         ProfileIndexFunc(profileNamespace),
		SecretPrefixIndex:    SecretPrefixIndexFunc,
	}
}

// NewMachineDeploymentInformer returns an informer of MachineDeployments fed
// by lw, with MachineDeploymentIndexers, without periodic resyncs and without
// managed fields.
func NewMachineDeploymentInformer(lw cache.ListerWatcher, profileNamespace string) cache.SharedIndexInformer {
	i := cache.NewSharedIndexInformer(lw, &clusterv1alpha1.MachineDeployment{}, 0, MachineDeploymentIndexers(profileNamespace))
	// Setting a transform on an informer that has not started cannot fail.
	_ = i.SetTransform(machinecontroller.StripManagedFields)
	return i
}
