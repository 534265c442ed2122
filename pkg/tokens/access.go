package tokens

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// The fetch token's access: a Role allowing GET on the MachineDeployment's own
// Secrets by name, bound to the MachineDeployment's own ServiceAccount, whose
// tokens are the fetch tokens (see FetchIssuer).

// PurposeFetchAccess labels the Role, the RoleBinding and the ServiceAccount.
const PurposeFetchAccess = "fetch-access"

// FetchAccessName is the name of ref's Role, RoleBinding and ServiceAccount.
func FetchAccessName(ref machinecontroller.Ref) string {
	return fetchAccessPrefix + ref.Hash()
}

const fetchAccessPrefix = "osm-fetch-"

// FetchServiceAccount is the identity of ref's fetch tokens. Its tokens carry
// only the groups every ServiceAccount of namespace has (system:serviceaccounts,
// system:serviceaccounts:<namespace>, system:authenticated): none that a
// cluster binds to node bootstrapping, as it may system:bootstrappers.
func FetchServiceAccount(ref machinecontroller.Ref, namespace string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		ObjectMeta:                   meta(ref, namespace),
		AutomountServiceAccountToken: ptr.To(false),
	}
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

// FetchRoleBinding binds ref's Role in namespace to ref's ServiceAccount (in
// FetchNamespace).
func FetchRoleBinding(ref machinecontroller.Ref, namespace string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: meta(ref, namespace),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: FetchAccessName(ref)},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: FetchAccessName(ref), Namespace: FetchNamespace}},
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
