package migrate

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// migrate deletes an object of upstream's name only when it has the shape
// upstream gives it: upstream writes its Secrets, ServiceAccount and RBAC
// without an owner (no app.kubernetes.io/managed-by label, no
// ownerReferences), with the type, labels, annotations and keys below. An
// object of that name that is not provably upstream's — osm-apiserver's
// (labelled for another MD whose names it shares), a user's, another tool's —
// is left alone and listed in the plan with the reason. Apply deletes with
// the UID Find read as a precondition: an object replaced since is not
// deleted either.

// Skip is an object with one of upstream's names that migrate leaves alone.
type Skip struct {
	Object Object
	// Reason says why it is not upstream's.
	Reason string
}

func (s Skip) String() string {
	return s.Object.String() + ": " + s.Reason
}

// ownerless says why meta is not upstream's: an owner label or reference.
func ownerless(meta metav1.ObjectMeta) string {
	if v, ok := meta.Labels[machinecontroller.ManagedByLabel]; ok {
		return fmt.Sprintf("labelled %s=%s; upstream's carry no such label", machinecontroller.ManagedByLabel, v)
	}
	if len(meta.OwnerReferences) > 0 {
		o := meta.OwnerReferences[0]
		return fmt.Sprintf("owned by %s %s (ownerReferences); upstream's have no owner", o.Kind, o.Name)
	}
	return ""
}

// notUpstreamSecret says why s is not a Secret upstream wrote, of type typ
// with every key in keys; "" when it is.
func notUpstreamSecret(s *corev1.Secret, typ corev1.SecretType, keys ...string) string {
	if why := ownerless(s.ObjectMeta); why != "" {
		return why
	}
	if got := s.Type; got != typ && (got != "" || typ != corev1.SecretTypeOpaque) {
		return fmt.Sprintf("of type %s, upstream's is %s", got, typ)
	}
	for _, k := range keys {
		if _, ok := s.Data[k]; !ok {
			return fmt.Sprintf("without key %s, which upstream's holds", k)
		}
	}
	return ""
}

// notUpstreamPayload says why a payload Secret of an MD's name is not the
// one upstream wrote: an Opaque Secret with the MD's revision annotation.
func notUpstreamPayload(s *corev1.Secret) string {
	if why := notUpstreamSecret(s, corev1.SecretTypeOpaque); why != "" {
		return why
	}
	if _, ok := s.Annotations[machinecontroller.AnnotationSecretMDRevision]; !ok {
		return "without annotation " + machinecontroller.AnnotationSecretMDRevision + ", which upstream's has"
	}
	return ""
}

// notUpstreamKubeletBootstrap says why a kubelet bootstrap kubeconfig Secret
// of upstream's name for an MD is not upstream's: an Opaque Secret holding
// key kubeconfig.
func notUpstreamKubeletBootstrap(s *corev1.Secret) string {
	return notUpstreamSecret(s, corev1.SecretTypeOpaque, "kubeconfig")
}

// notUpstreamBootstrapToken says why a Secret labelled with upstream's
// BootstrapTokenLabel is not one of upstream's bootstrap tokens.
func notUpstreamBootstrapToken(s *corev1.Secret) string {
	return notUpstreamSecret(s, corev1.SecretTypeBootstrapToken, "token-id", "token-secret")
}

// notUpstreamGetterToken says why the Secret GetterTokenSecret is not the
// getter's legacy token Secret: upstream's is a
// kubernetes.io/service-account-token of ServiceAccount GetterName.
func notUpstreamGetterToken(s *corev1.Secret) string {
	if why := notUpstreamSecret(s, corev1.SecretTypeServiceAccountToken); why != "" {
		return why
	}
	if sa := s.Annotations[corev1.ServiceAccountNameKey]; sa != GetterName {
		return fmt.Sprintf("a token of ServiceAccount %q, not of %s", sa, GetterName)
	}
	return ""
}

// notUpstreamGetterRole says why Role GetterName is not upstream's: it
// grants reading Secrets and nothing else.
func notUpstreamGetterRole(r *rbacv1.Role) string {
	if why := ownerless(r.ObjectMeta); why != "" {
		return why
	}
	for _, rule := range r.Rules {
		if !slices.Equal(rule.APIGroups, []string{""}) || !slices.Equal(rule.Resources, []string{"secrets"}) ||
			len(rule.NonResourceURLs) > 0 || slices.ContainsFunc(rule.Verbs, func(v string) bool { return !slices.Contains([]string{"get", "list", "watch"}, v) }) {
			return fmt.Sprintf("grants %s on %s of API groups %q; upstream's grants reading Secrets only",
				strings.Join(rule.Verbs, ","), strings.Join(append(rule.Resources, rule.NonResourceURLs...), ","), rule.APIGroups)
		}
	}
	return ""
}

// notUpstreamGetterBinding says why RoleBinding GetterName is not upstream's:
// it binds Role GetterName to ServiceAccount GetterName, and no one else.
func notUpstreamGetterBinding(b *rbacv1.RoleBinding) string {
	if why := ownerless(b.ObjectMeta); why != "" {
		return why
	}
	if b.RoleRef.Kind != "Role" || b.RoleRef.Name != GetterName {
		return fmt.Sprintf("binds %s %s, upstream's binds Role %s", b.RoleRef.Kind, b.RoleRef.Name, GetterName)
	}
	want := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: b.Namespace, Name: GetterName}
	if len(b.Subjects) != 1 || b.Subjects[0] != want {
		return fmt.Sprintf("binds %v, upstream's only ServiceAccount %s/%s", b.Subjects, b.Namespace, GetterName)
	}
	return ""
}
