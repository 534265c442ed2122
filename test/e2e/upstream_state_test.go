package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/migrate"
)

// buildUpstreamState makes, in ns and the cluster, what upstream OSM leaves:
//   - pool-a, pool-b, pool-c: MDs with upstream's finalizer at revision 3,
//     their payload Secrets, kubelet bootstrap kubeconfigs and bootstrap tokens
//     written by upstream first (pool-a names osp-ubuntu, ours; pool-b
//     upstream's osp-ubuntu in ns; pool-c no profile);
//   - pool-d: the same, deleted: upstream's finalizer holds it;
//   - upstream's OSC CRD and an OSC per MD but pool-d;
//   - the getter token (legacy, made by kube-controller-manager), its
//     ServiceAccount, Role and RoleBinding;
//   - upstream's webhook configuration for MDs in ns, its server gone;
//   - upstream's controller Lease, renewed just now.
func buildUpstreamState(t *testing.T, up, ns string) *upstreamState {
	t.Helper()
	ctx := testContext(t)
	settings := machinecontroller.CloudInitSettingsNamespace
	u := &upstreamState{webhook: "operatingsystemmanager.k8c.io", lease: migrate.ControllerLease}

	kubectl(t, "apply", "--server-side", "-f", filepath.Join(up, "deploy/crd/operatingsystemmanager.k8c.io_operatingsystemconfigs.yaml"))
	t.Cleanup(func() { _, _ = kubectlCtx(context.Background(), "delete", "--ignore-not-found", "crd", migrate.OSCCRD) })
	kubectl(t, "wait", "--for", "condition=Established", "--timeout", "60s", "crd/"+migrate.OSCCRD)

	osp := readObject(t, filepath.Join(up, "deploy/osps/default/osp-ubuntu.yaml"))
	create(ctx, t, osp, ns)
	for i, md := range []string{"pool-a", "pool-b", "pool-c", "pool-d"} {
		ref := machinecontroller.Ref{Namespace: ns, Name: md}
		for _, kind := range []string{"bootstrap", "provisioning"} {
			mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: settings, Name: fmt.Sprintf("%s-%s-%s-config", md, ns, kind),
				Annotations: map[string]string{machinecontroller.AnnotationSecretMDRevision: "3"}},
				Data: map[string][]byte{machinecontroller.SecretDataKey: []byte("#cloud-config\n# upstream's " + kind + "\n")}})
		}
		mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: settings, Name: migrate.KubeletBootstrapSecretName(ref)},
			Data: map[string][]byte{"kubeconfig": []byte("upstream's")}})
		id := fmt.Sprintf("%05d%d", time.Now().UnixNano()%100_000, i)
		mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "bootstrap-token-" + id,
			Labels: map[string]string{migrate.BootstrapTokenLabel: migrate.UpstreamKey(ref)}},
			Type: corev1.SecretTypeBootstrapToken,
			Data: map[string][]byte{"token-id": []byte(id), "token-secret": []byte("0123456789abcdef"), "usage-bootstrap-authentication": []byte("true")}})
		profile := map[string]string{"pool-a": "osp-ubuntu", "pool-b": "osp-ubuntu", "pool-d": "osp-ubuntu"}[md]
		m := syncerMD(ns, md, profile, "3")
		if profile == "" {
			delete(m.Annotations, machinecontroller.AnnotationOSP)
		}
		if md == "pool-b" {
			m.Annotations[machinecontroller.AnnotationOSPNamespace] = ns
		}
		m.Finalizers = []string{migrate.Finalizer}
		createMD(t, m)
		// Should the test fail half-way, the finalizer must not keep the MD.
		t.Cleanup(func() {
			_, _ = env.dynamic.Resource(mdResource).Namespace(ns).Patch(context.Background(), md, types.MergePatchType,
				[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		})
		if md == "pool-d" {
			if err := env.dynamic.Resource(mdResource).Namespace(ns).Delete(ctx, md, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		osc := readObject(t, filepath.Join(up, "cases/ubuntu-aws-containerd/expected-osc.yaml"))
		osc.SetName(fmt.Sprintf("%s-%s-config", md, ns))
		osc.SetResourceVersion("")
		if _, err := env.dynamic.Resource(migrate.OSCResource).Namespace("kube-system").Create(ctx, osc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	mustCreate(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: settings, Name: migrate.GetterName}})
	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: settings, Name: migrate.GetterTokenSecret,
		Annotations: map[string]string{corev1.ServiceAccountNameKey: migrate.GetterName}}, Type: corev1.SecretTypeServiceAccountToken})
	mustCreate(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: settings, Name: migrate.GetterName},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}}}})
	mustCreate(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: settings, Name: migrate.GetterName},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: migrate.GetterName},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: settings, Name: migrate.GetterName}}})
	startControllerManager(t, "serviceaccount-token-controller")
	eventually(t, time.Minute, func() error {
		s, err := env.kube.CoreV1().Secrets(settings).Get(ctx, migrate.GetterTokenSecret, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if u.getterToken = string(s.Data[corev1.ServiceAccountTokenKey]); u.getterToken == "" {
			return errors.New("kube-controller-manager has not written the getter token yet")
		}
		return nil
	})
	// Upstream's payloads fetch with it: it reads every Secret there.
	if _, err := asToken(t, u.getterToken).CoreV1().Secrets(settings).Get(ctx, fmt.Sprintf("pool-a-%s-provisioning-config", ns), metav1.GetOptions{}); err != nil {
		t.Fatalf("the getter token does not work: %v", err)
	}

	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	mustCreate(t, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: u.webhook},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "machinedeployments.cluster.k8s.io", FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			// Only the test's MDs: the other tests' must stay writable.
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"e2e-migrate": "true"}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"cluster.k8s.io"}, APIVersions: []string{"v1alpha1"}, Resources: []string{"machinedeployments"}},
			}},
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Namespace: "kube-system", Name: "operating-system-manager-webhook", Path: ptr.To("/machinedeployment")}},
		}},
	})
	holder, duration := "operating-system-manager-7d9c-x2x4z", int32(15)
	mustCreate(t, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: u.lease},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration, RenewTime: &metav1.MicroTime{Time: time.Now()}}})
	return u
}

// mustCreate creates obj and deletes it when the test ends.
func mustCreate(t *testing.T, obj metav1.Object) {
	t.Helper()
	ctx := context.Background()
	ns, name := obj.GetNamespace(), obj.GetName()
	var create, remove func() error
	opts := metav1.DeleteOptions{}
	switch o := obj.(type) {
	case *corev1.Secret:
		create = func() error {
			_, err := env.kube.CoreV1().Secrets(ns).Create(ctx, o, metav1.CreateOptions{})
			return err
		}
		remove = func() error { return env.kube.CoreV1().Secrets(ns).Delete(ctx, name, opts) }
	case *corev1.ServiceAccount:
		create = func() error {
			_, err := env.kube.CoreV1().ServiceAccounts(ns).Create(ctx, o, metav1.CreateOptions{})
			return err
		}
		remove = func() error { return env.kube.CoreV1().ServiceAccounts(ns).Delete(ctx, name, opts) }
	case *rbacv1.Role:
		create = func() error { _, err := env.kube.RbacV1().Roles(ns).Create(ctx, o, metav1.CreateOptions{}); return err }
		remove = func() error { return env.kube.RbacV1().Roles(ns).Delete(ctx, name, opts) }
	case *rbacv1.RoleBinding:
		create = func() error {
			_, err := env.kube.RbacV1().RoleBindings(ns).Create(ctx, o, metav1.CreateOptions{})
			return err
		}
		remove = func() error { return env.kube.RbacV1().RoleBindings(ns).Delete(ctx, name, opts) }
	case *coordinationv1.Lease:
		create = func() error {
			_, err := env.kube.CoordinationV1().Leases(ns).Create(ctx, o, metav1.CreateOptions{})
			return err
		}
		remove = func() error { return env.kube.CoordinationV1().Leases(ns).Delete(ctx, name, opts) }
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		webhooks := env.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
		create = func() error { _, err := webhooks.Create(ctx, o, metav1.CreateOptions{}); return err }
		remove = func() error { return webhooks.Delete(ctx, name, opts) }
	default:
		t.Fatalf("mustCreate: %T", obj)
	}
	if err := create(); err != nil {
		t.Fatalf("%T %s/%s: %v", obj, ns, name, err)
	}
	t.Cleanup(func() {
		if err := remove(); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("clean-up of %T %s/%s: %v", obj, ns, name, err)
		}
	})
}
