package syncer

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	rbacv1listers "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// owned watches what the syncer keeps in cloud-init-settings besides Secrets
// (the fetch tokens' ServiceAccounts, Roles and RoleBindings, by label) and
// the namespace itself, so that a deletion or change by someone else is
// repaired within moments rather than at the next resync. Only the leader
// runs it, for as long as it leads.
type owned struct {
	factories []informers.SharedInformerFactory
	// namespace holds an informer of each managed namespace, by name.
	namespace       map[string]cache.SharedIndexInformer
	serviceAccounts cache.SharedIndexInformer
	roles           cache.SharedIndexInformer
	roleBindings    cache.SharedIndexInformer
}

func newOwned(client kubernetes.Interface) *owned {
	managed := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(machinecontroller.CloudInitSettingsNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = machinecontroller.ManagedSelector().String() }))
	o := &owned{
		factories:       []informers.SharedInformerFactory{managed},
		namespace:       map[string]cache.SharedIndexInformer{},
		serviceAccounts: managed.Core().V1().ServiceAccounts().Informer(),
		roles:           managed.Rbac().V1().Roles().Informer(),
		roleBindings:    managed.Rbac().V1().RoleBindings().Informer(),
	}
	all := []cache.SharedIndexInformer{o.serviceAccounts, o.roles, o.roleBindings}
	for _, m := range managedNamespaces {
		// One namespace, by name: the ClusterRole may name it in resourceNames.
		f := newNamespaceFactory(client, m.name)
		o.factories = append(o.factories, f)
		o.namespace[m.name] = f.Core().V1().Namespaces().Informer()
		all = append(all, o.namespace[m.name])
	}
	for _, i := range all {
		// Setting a transform on an informer that has not started cannot fail.
		_ = i.SetTransform(machinecontroller.StripManagedFields)
	}
	return o
}

func newNamespaceFactory(client kubernetes.Interface, name string) informers.SharedInformerFactory {
	return informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
}

// start runs the informers until ctx ends; shutdown waits for them to end.
func (o *owned) start(ctx context.Context) {
	for _, f := range o.factories {
		f.Start(ctx.Done())
	}
}

func (o *owned) shutdown() {
	for _, f := range o.factories {
		f.Shutdown()
	}
}

func (o *owned) namespaces(name string) corev1listers.NamespaceLister {
	return corev1listers.NewNamespaceLister(o.namespace[name].GetIndexer())
}

// namespacesSynced says whether the informer of every managed namespace listed.
func (o *owned) namespacesSynced() bool {
	for _, i := range o.namespace {
		if !i.HasSynced() {
			return false
		}
	}
	return true
}

func (o *owned) serviceAccountLister() corev1listers.ServiceAccountLister {
	return corev1listers.NewServiceAccountLister(o.serviceAccounts.GetIndexer())
}

func (o *owned) roleLister() rbacv1listers.RoleLister {
	return rbacv1listers.NewRoleLister(o.roles.GetIndexer())
}

func (o *owned) roleBindingLister() rbacv1listers.RoleBindingLister {
	return rbacv1listers.NewRoleBindingLister(o.roleBindings.GetIndexer())
}
