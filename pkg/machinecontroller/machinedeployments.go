package machinecontroller

import (
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// machine-controller ships the MachineDeployment types but no clientset, so the
// informer lists and watches through a REST client that decodes straight into
// the SDK's types: objects are converted once per event, not once per read.

// MachineDeployments is the group and resource of MachineDeployments.
var MachineDeployments = clusterv1alpha1.Resource("machinedeployments")

// ProfileIndex indexes MachineDeployments by the profile they use
// (Profile.String(), defaulted or named), so a profile change finds its MDs
// without a full list.
const ProfileIndex = "profile"

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clusterv1alpha1.AddToScheme(scheme))
}

// NewListWatch returns a ListerWatcher of all MachineDeployments of the cluster
// that config points at.
func NewListWatch(config *rest.Config) (cache.ListerWatcher, error) {
	return newListWatch(config, MachineDeployments.Resource)
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

// NewInformer returns an informer of MachineDeployments fed by lw, indexed by
// namespace, by profile (profiles of MDs that name no namespace are in
// profileNamespace) and by the prefix of their dictated Secret names, without
// periodic resyncs and without managed fields.
func NewInformer(lw cache.ListerWatcher, profileNamespace string) cache.SharedIndexInformer {
	i := cache.NewSharedIndexInformer(lw, &clusterv1alpha1.MachineDeployment{}, 0, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		ProfileIndex:         profileIndexFunc(profileNamespace),
		SecretPrefixIndex:    secretPrefixIndexFunc,
	})
	// Setting a transform on an informer that has not started cannot fail.
	_ = i.SetTransform(StripManagedFields)
	return i
}

func profileIndexFunc(defaultNamespace string) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		md, ok := obj.(*clusterv1alpha1.MachineDeployment)
		if !ok {
			return nil, nil
		}
		// An MD whose profile cannot be defaulted uses none.
		if p, err := ProfileOf(md, defaultNamespace); err == nil {
			return []string{p.String()}, nil
		}
		return nil, nil
	}
}

// StripManagedFields is the transform of every informer here: managed fields
// are often as big as the object itself and nothing reads them. Annotations
// stay, they feed renders; namespace, labels and annotations are interned
// (InternMeta).
func StripManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	InternMeta(obj)
	// Tombstones and other non-objects pass unchanged.
	return obj, nil
}
