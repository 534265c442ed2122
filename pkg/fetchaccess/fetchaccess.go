// Package fetchaccess grants a MachineDeployment's fetch token exactly what a
// node needs while it boots: GET on that MachineDeployment's provisioning Secret
// and kubelet bootstrap kubeconfig Secret, nothing else (no list, no watch, no
// other Secret).
//
// The fetch token is a bootstrap token (see package bootstraptoken) whose
// auth-extra-groups holds a group of its own; a Role with resourceNames and a
// RoleBinding to that group grant the access. Bootstrap tokens need neither
// kube-controller-manager nor service-account token Secrets.
package fetchaccess

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/syncer/mdref"
)

// Purpose labels the Role and RoleBinding.
const Purpose = "fetch-access"

// Group is the group of ref's fetch token. Bootstrap-token groups must match
// system:bootstrappers:[a-z0-9:-]*: the MachineDeployment's name may hold dots, so
// the group is named after its digest.
func Group(ref mdref.Ref) string {
	return "system:bootstrappers:osm:md-" + ref.Hash()
}

// Name is the name of ref's Role and RoleBinding.
func Name(ref mdref.Ref) string {
	return "osm-fetch-" + ref.Hash()
}

// Role allows GET on secretNames in namespace.
func Role(ref mdref.Ref, namespace string, secretNames ...string) *rbacv1.Role {
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

// RoleBinding binds ref's Role to ref's fetch-token group.
func RoleBinding(ref mdref.Ref, namespace string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: meta(ref, namespace),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: Name(ref)},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: Group(ref)}},
	}
}

func meta(ref mdref.Ref, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        Name(ref),
		Namespace:   namespace,
		Labels:      ref.Labels(Purpose),
		Annotations: ref.Annotations(),
	}
}
