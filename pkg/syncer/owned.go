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
	factories       []informers.SharedInformerFactory
	namespace       cache.SharedIndexInformer
	serviceAccounts cache.SharedIndexInformer
	roles           cache.SharedIndexInformer
	roleBindings    cache.SharedIndexInformer
}

func newOwned(client kubernetes.Interface) *owned {
	managed := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(machinecontroller.CloudInitSettingsNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = machinecontroller.ManagedSelector().String() }))
	// One namespace, by name: the ClusterRole may name it in resourceNames.
	namespaces := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", machinecontroller.CloudInitSettingsNamespace).String()
		}))
	o := &owned{
		factories:       []informers.SharedInformerFactory{managed, namespaces},
		namespace:       namespaces.Core().V1().Namespaces().Informer(),
		serviceAccounts: managed.Core().V1().ServiceAccounts().Informer(),
		roles:           managed.Rbac().V1().Roles().Informer(),
		roleBindings:    managed.Rbac().V1().RoleBindings().Informer(),
	}
	for _, i := range []cache.SharedIndexInformer{o.namespace, o.serviceAccounts, o.roles, o.roleBindings} {
		// Setting a transform on an informer that has not started cannot fail.
		_ = i.SetTransform(machinecontroller.StripManagedFields)
	}
	return o
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

func (o *owned) namespaces() corev1listers.NamespaceLister {
	return corev1listers.NewNamespaceLister(o.namespace.GetIndexer())
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
