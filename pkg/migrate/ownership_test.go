package migrate

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Objects with upstream's names that are not upstream's — osm-apiserver's
// Secret of another MD sharing the name, a user's, another tool's, a Role
// granting more — are left alone and listed with the reason; upstream's own
// go.
func TestMigrateLeavesLookAlikesAlone(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t)
	update := func(gvr string, o runtime.Object, ns string) {
		t.Helper()
		var err error
		switch gvr {
		case "secrets":
			err = c.kube.Tracker().Update(secretsResource, o, ns)
		case "roles":
			err = c.kube.Tracker().Update(rbacv1.SchemeGroupVersion.WithResource("roles"), o, ns)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// The syncer took e2e/b over: upstream's credentials may go.
	for _, o := range ourPayloads(machinecontroller.Ref{Namespace: "e2e", Name: "b"}, "2") {
		update("secrets", o, settings)
	}
	// e2e/gone is being deleted; its bootstrap Secret's name is osm-apiserver's
	// for another MD, its provisioning Secret's a user's (owned by a ConfigMap).
	other := machinecontroller.Ref{Namespace: "e2e-x", Name: "gone"}
	ours := secret(settings, "gone-e2e-bootstrap-config", other.Labels("bootstrap-config"), corev1.SecretTypeOpaque)
	ours.Annotations = map[string]string{machinecontroller.AnnotationSecretMDRevision: "1"}
	update("secrets", ours, settings)
	users := secret(settings, "gone-e2e-provisioning-config", nil, corev1.SecretTypeOpaque)
	users.Annotations = map[string]string{machinecontroller.AnnotationSecretMDRevision: "1"}
	users.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "mine", UID: "u1"}}
	update("secrets", users, settings)
	// e2e/a's kubelet bootstrap kubeconfig is another tool's; a bootstrap
	// token with upstream's label for e2e/a is osm-apiserver's.
	helm := secret(settings, "e2e-a-kubelet-bootstrap-config", map[string]string{machinecontroller.ManagedByLabel: "Helm"}, corev1.SecretTypeOpaque)
	helm.Data = map[string][]byte{"kubeconfig": []byte("helm's")}
	update("secrets", helm, settings)
	token := secret("kube-system", "bootstrap-token-abc123", map[string]string{BootstrapTokenLabel: "e2e-a",
		machinecontroller.ManagedByLabel: machinecontroller.ManagedByValue}, corev1.SecretTypeBootstrapToken)
	token.Data = map[string][]byte{"token-id": []byte("abc123"), "token-secret": []byte("0123456789abcdef")}
	update("secrets", token, "kube-system")
	// A user's Role cloud-init-getter, granting more than upstream's.
	update("roles", &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: settings, Name: GetterName},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create"}}}}, settings)

	p := plan(t, c, "look-alikes.txt")
	applyPlan(t, c, p, "look-alikes-applied.txt")

	for _, o := range []struct{ ns, name string }{
		{settings, "gone-e2e-bootstrap-config"}, {settings, "gone-e2e-provisioning-config"},
		{settings, "e2e-a-kubelet-bootstrap-config"}, {"kube-system", "bootstrap-token-abc123"},
	} {
		if _, err := c.kube.CoreV1().Secrets(o.ns).Get(ctx, o.name, metav1.GetOptions{}); err != nil {
			t.Errorf("look-alike secret %s/%s: %v", o.ns, o.name, err)
		}
	}
	if _, err := c.kube.RbacV1().Roles(settings).Get(ctx, GetterName, metav1.GetOptions{}); err != nil {
		t.Errorf("the user's role %s: %v", GetterName, err)
	}
	var skipped []string
	for _, s := range p.Skipped {
		skipped = append(skipped, s.Object.String())
	}
	slices.Sort(skipped)
	want := []string{"Role cloud-init-settings/cloud-init-getter", "Secret cloud-init-settings/e2e-a-kubelet-bootstrap-config",
		"Secret cloud-init-settings/gone-e2e-bootstrap-config", "Secret cloud-init-settings/gone-e2e-provisioning-config",
		"Secret kube-system/bootstrap-token-abc123"}
	if !slices.Equal(skipped, want) {
		t.Errorf("skipped %v, want %v", skipped, want)
	}
	// Upstream's own getter objects are gone.
	mustBeGone(t, c, "the getter token", func() error {
		_, err := c.kube.CoreV1().Secrets(settings).Get(ctx, GetterTokenSecret, metav1.GetOptions{})
		return err
	})
	mustBeGone(t, c, "the getter's binding", func() error {
		_, err := c.kube.RbacV1().RoleBindings(settings).Get(ctx, GetterName, metav1.GetOptions{})
		return err
	})
}

// Each check, one look-alike at a time.
func TestNotUpstream(t *testing.T) {
	payload := func(mutate func(*corev1.Secret)) *corev1.Secret {
		s := secret(settings, "md-ns-bootstrap-config", nil, corev1.SecretTypeOpaque)
		s.Annotations = map[string]string{machinecontroller.AnnotationSecretMDRevision: "1"}
		mutate(s)
		return s
	}
	for name, tc := range map[string]struct {
		got      string
		upstream bool
	}{
		"upstream's payload": {notUpstreamPayload(payload(func(*corev1.Secret) {})), true},
		"labelled ours": {notUpstreamPayload(payload(func(s *corev1.Secret) {
			s.Labels = map[string]string{machinecontroller.ManagedByLabel: "osm-apiserver"}
		})), false},
		"owned":        {notUpstreamPayload(payload(func(s *corev1.Secret) { s.OwnerReferences = []metav1.OwnerReference{{Kind: "Pod", Name: "p"}} })), false},
		"another type": {notUpstreamPayload(payload(func(s *corev1.Secret) { s.Type = corev1.SecretTypeTLS })), false},
		"no revision":  {notUpstreamPayload(payload(func(s *corev1.Secret) { s.Annotations = nil })), false},
		"getter token of another SA": {notUpstreamGetterToken(&corev1.Secret{Type: corev1.SecretTypeServiceAccountToken,
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.ServiceAccountNameKey: "default"}}}), false},
		"getter binding to another subject": {notUpstreamGetterBinding(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: settings},
			RoleRef:  rbacv1.RoleRef{Kind: "Role", Name: GetterName},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "system:authenticated"}}}), false},
	} {
		if (tc.got == "") != tc.upstream {
			t.Errorf("%s: reason %q, want upstream's %v", name, tc.got, tc.upstream)
		}
	}
}
