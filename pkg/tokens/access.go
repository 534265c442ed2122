package tokens

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// The fetch token's access: a Role allowing GET on the MachineDeployment's own
// Secrets by name, and a RoleBinding to a group only that token carries.

// PurposeFetchAccess labels the Role and RoleBinding.
const PurposeFetchAccess = "fetch-access"

// FetchGroup is the group of ref's fetch token. Bootstrap-token groups must match
// system:bootstrappers:[a-z0-9:-]*: the MachineDeployment's name may hold dots, so
// the group is named after its digest.
func FetchGroup(ref machinecontroller.Ref) string {
	return "system:bootstrappers:osm:md-" + ref.Hash()
}

// FetchAccessName is the name of ref's Role and RoleBinding.
func FetchAccessName(ref machinecontroller.Ref) string {
	return "osm-fetch-" + ref.Hash()
}

// FetchRole allows GET on secretNames in namespace.
func FetchRole(ref machinecontroller.Ref, namespace string, secretNames ...string) *rbacv1.Role {
	return &rbacv1.Role{
		ObjectMeta: meta(ref, namespace),
		Rules: []rbacv1.PolicyRule{{
			APIGroups:     []string{""},
			Resources:     []string{"secrets"},
			Verbs:         []string{"get"},
			ResourceNames: append([]string(nil), secretNames...),
		}},
	}
}

// FetchRoleBinding binds ref's Role to ref's fetch-token group.
func FetchRoleBinding(ref machinecontroller.Ref, namespace string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: meta(ref, namespace),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: FetchAccessName(ref)},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: FetchGroup(ref)}},
	}
}

func meta(ref machinecontroller.Ref, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        FetchAccessName(ref),
		Namespace:   namespace,
		Labels:      ref.Labels(PurposeFetchAccess),
		Annotations: ref.Annotations(),
	}
}
