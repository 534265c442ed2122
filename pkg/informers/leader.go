package informers

import (
	"context"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// The leader's controllers watch some objects only while they lead: each
// term builds its informers here, starts them and shuts them down with it.

// factories start and shut down the informer factories of one term.
type factories []informers.SharedInformerFactory

// Start runs the informers of every factory until ctx ends.
func (f factories) Start(ctx context.Context) {
	for _, factory := range f {
		factory.Start(ctx.Done())
	}
}

// Shutdown waits for the informers to stop (after ctx ended).
func (f factories) Shutdown() {
	for _, factory := range f {
		factory.Shutdown()
	}
}

// Owned are the informers of what the syncer keeps besides Secrets: the fetch
// tokens' ServiceAccounts in tokens.FetchNamespace and their Roles and
// RoleBindings in cloud-init-settings (by label), and each managed namespace
// itself.
type Owned struct {
	factories
	ServiceAccounts, Roles, RoleBindings cache.SharedIndexInformer
	// Namespaces holds an informer of each managed namespace, by name.
	Namespaces map[string]cache.SharedIndexInformer
}

// NewOwned returns the informers of one term of the syncer, watching the
// namespaces named.
func NewOwned(client kubernetes.Interface, namespaces []string) *Owned {
	ours := informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = machinecontroller.ManagedSelector().String() })
	managed := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(machinecontroller.CloudInitSettingsNamespace), ours)
	fetch := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(tokens.FetchNamespace), ours)
	o := &Owned{
		factories:       factories{managed, fetch},
		ServiceAccounts: fetch.Core().V1().ServiceAccounts().Informer(),
		Roles:           managed.Rbac().V1().Roles().Informer(),
		RoleBindings:    managed.Rbac().V1().RoleBindings().Informer(),
		Namespaces:      map[string]cache.SharedIndexInformer{},
	}
	all := []cache.SharedIndexInformer{o.ServiceAccounts, o.Roles, o.RoleBindings}
	for _, name := range namespaces {
		// One namespace, by name: the ClusterRole may name it in resourceNames.
		f := oneObject(client, metav1.NamespaceAll, name)
		o.factories = append(o.factories, f)
		o.Namespaces[name] = f.Core().V1().Namespaces().Informer()
		all = append(all, o.Namespaces[name])
	}
	stripManagedFields(all...)
	return o
}

// Join are the informers of the machine join controller: the join
// identities (ServiceAccounts) and credentials (Secrets) that selector
// selects in namespace, and the kubelet client CSRs.
type Join struct {
	factories
	Accounts, Credentials, CSRs cache.SharedIndexInformer
}

// NewJoin returns the informers of one term of the machine join controller.
func NewJoin(client kubernetes.Interface, namespace, selector string) *Join {
	ours := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	kubeletCSRs := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.signerName", certificatesv1.KubeAPIServerClientKubeletSignerName).String()
		}))
	j := &Join{
		factories:   factories{ours, kubeletCSRs},
		Accounts:    ours.Core().V1().ServiceAccounts().Informer(),
		Credentials: ours.Core().V1().Secrets().Informer(),
		CSRs:        kubeletCSRs.Certificates().V1().CertificateSigningRequests().Informer(),
	}
	stripManagedFields(j.Accounts, j.Credentials, j.CSRs)
	return j
}

// NewConfigMap returns the informer of the one ConfigMap namespace/name, and
// NewSecret of the one Secret: a field selector keeps the watch, and the
// RBAC it needs, to that name. They run until the context of their
// RunWithContext ends.
func NewConfigMap(client kubernetes.Interface, namespace, name string) cache.SharedIndexInformer {
	return oneObject(client, namespace, name).Core().V1().ConfigMaps().Informer()
}

// NewSecret: see NewConfigMap.
func NewSecret(client kubernetes.Interface, namespace, name string) cache.SharedIndexInformer {
	return oneObject(client, namespace, name).Core().V1().Secrets().Informer()
}

// NewEndpointSlice returns the informer of the one EndpointSlice
// namespace/name, as NewConfigMap: the cluster facts read kube-apiserver's
// own endpoints from default/kubernetes, the slice kube-apiserver keeps for
// the Service of the same name.
func NewEndpointSlice(client kubernetes.Interface, namespace, name string) cache.SharedIndexInformer {
	i := oneObject(client, namespace, name).Discovery().V1().EndpointSlices().Informer()
	stripManagedFields(i)
	return i
}

func oneObject(client kubernetes.Interface, namespace, name string) informers.SharedInformerFactory {
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	return informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = selector }))
}

func stripManagedFields(all ...cache.SharedIndexInformer) {
	for _, i := range all {
		// Setting a transform on an informer that has not started cannot fail.
		_ = i.SetTransform(machinecontroller.StripManagedFields)
	}
}
