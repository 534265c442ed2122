package syncer

import (
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	rbacv1listers "k8s.io/client-go/listers/rbac/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
)

// owned watches what the syncer keeps in cloud-init-settings besides Secrets
// (the fetch tokens' ServiceAccounts, Roles and RoleBindings, by label) and
// the managed namespaces themselves, so that a deletion or change by someone
// else is repaired within moments rather than at the next resync. Only the
// leader runs it, for as long as it leads.
type owned struct {
	*informers.Owned
}

func newOwned(client kubernetes.Interface) *owned {
	names := make([]string, len(managedNamespaces))
	for i, m := range managedNamespaces {
		names[i] = m.name
	}
	return &owned{informers.NewOwned(client, names)}
}

func (o *owned) namespaces(name string) corev1listers.NamespaceLister {
	return corev1listers.NewNamespaceLister(o.Namespaces[name].GetIndexer())
}

// namespacesSynced says whether the informer of every managed namespace listed.
func (o *owned) namespacesSynced() bool {
	for _, i := range o.Namespaces {
		if !i.HasSynced() {
			return false
		}
	}
	return true
}

func (o *owned) serviceAccountLister() corev1listers.ServiceAccountLister {
	return corev1listers.NewServiceAccountLister(o.ServiceAccounts.GetIndexer())
}

func (o *owned) roleLister() rbacv1listers.RoleLister {
	return rbacv1listers.NewRoleLister(o.Roles.GetIndexer())
}

func (o *owned) roleBindingLister() rbacv1listers.RoleBindingLister {
	return rbacv1listers.NewRoleBindingLister(o.RoleBindings.GetIndexer())
}
