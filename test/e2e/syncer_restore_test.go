package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/syncer"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// restoreWithin is how soon the syncer repairs what it owns; its resync is a
// minute in the tests' replicas and ten in the harness's.
const restoreWithin = 10 * time.Second

// A deleted fetch Role, RoleBinding or ServiceAccount is back within seconds,
// not at the next resync, and the MD's fetch token reads its Secrets again;
// a new ServiceAccount has new tokens, in new payloads.
func TestSyncerRestoresFetchAccessWithinSeconds(t *testing.T) {
	ns, _ := startSyncerWithMD(t)
	token := fetchToken(t, payloadSecret(t, ns, "alpha", "bootstrap", annotated("1", "v1.0.0")))
	ref := machinecontroller.Ref{Namespace: ns, Name: "alpha"}
	name := tokens.FetchAccessName(ref)
	provisioning := machinecontroller.SecretName("alpha", ns, osm.PayloadTypeProvisioning)
	ctx := testContext(t)
	rbac := env.kube.RbacV1()
	readsOwn := func(token string) func() error {
		return func() error {
			_, err := asToken(t, token).CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(ctx, provisioning, metav1.GetOptions{})
			return err
		}
	}
	type object interface{ GetUID() types.UID }
	for what, o := range map[string]struct {
		get func() (object, error)
		del func() error
	}{
		"role": {
			get: func() (object, error) {
				return rbac.Roles(machinecontroller.CloudInitSettingsNamespace).Get(ctx, name, metav1.GetOptions{})
			},
			del: func() error {
				return rbac.Roles(machinecontroller.CloudInitSettingsNamespace).Delete(ctx, name, metav1.DeleteOptions{})
			},
		},
		"role binding": {
			get: func() (object, error) {
				return rbac.RoleBindings(machinecontroller.CloudInitSettingsNamespace).Get(ctx, name, metav1.GetOptions{})
			},
			del: func() error {
				return rbac.RoleBindings(machinecontroller.CloudInitSettingsNamespace).Delete(ctx, name, metav1.DeleteOptions{})
			},
		},
	} {
		before, err := o.get()
		if err != nil {
			t.Fatal(err)
		}
		if err := o.del(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		eventually(t, restoreWithin, func() error {
			after, err := o.get()
			if err != nil {
				return err
			}
			if after.GetUID() == before.GetUID() {
				return fmt.Errorf("%s not deleted yet", what)
			}
			return readsOwn(token)()
		})
		t.Logf("%s deleted: created again, and the fetch token reads its Secret, after %s", what, time.Since(start).Round(time.Millisecond))
	}

	if err := env.kube.CoreV1().ServiceAccounts(tokens.FetchNamespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var renewed string
	payloadSecret(t, ns, "alpha", "bootstrap", func(s *corev1.Secret) error {
		if renewed = fetchToken(t, s); renewed == token {
			return fmt.Errorf("still the deleted service account's token")
		}
		return nil
	})
	eventually(t, restoreWithin, readsOwn(renewed))
	t.Logf("service account deleted: a new fetch token in the bootstrap payload reads its Secret after %s", time.Since(start).Round(time.Millisecond))
	if time.Since(start) > restoreWithin {
		t.Errorf("restored after %s, want within %s", time.Since(start), restoreWithin)
	}
	eventually(t, 30*time.Second, func() error { return revoked(t, token) })
}

// Deleting cloud-init-settings deletes every payload, token Secret, fetch
// ServiceAccount and Role in it, and the syncer's own RoleBinding there. The
// harness's osm-apiserver, running with the RBAC of artifacts/deploy, recreates
// the namespace, its access and everything of every MD.
func TestSyncerRecreatesDeletedNamespace(t *testing.T) {
	startNamespaceController(t)
	ctx := testContext(t)
	const md = "e2e-ubuntu-aws"
	settings := machinecontroller.CloudInitSettingsNamespace
	before, err := env.kube.CoreV1().Namespaces().Get(ctx, settings, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldToken := fetchToken(t, payloadSecret(t, testNamespace, md, "bootstrap", func(*corev1.Secret) error { return nil }))
	if err := env.kube.CoreV1().Namespaces().Delete(ctx, settings, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	eventually(t, time.Minute, func() error {
		ns, err := env.kube.CoreV1().Namespaces().Get(ctx, settings, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ns.UID == before.UID {
			return fmt.Errorf("namespace %s not deleted yet (%s)", settings, ns.Status.Phase)
		}
		return nil
	})
	t.Logf("namespace deleted and recreated after %s", time.Since(start).Round(time.Millisecond))
	ref := machinecontroller.Ref{Namespace: testNamespace, Name: md}
	eventually(t, time.Minute, func() error {
		if _, err := env.kube.RbacV1().RoleBindings(settings).Get(ctx, syncer.AccessRoleBinding, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("the syncer's access: %w", err)
		}
		for _, name := range []string{machinecontroller.SecretName(md, testNamespace, osm.PayloadTypeProvisioning), machinecontroller.SecretName(md, testNamespace, osm.PayloadTypeBootstrap),
			machinecontroller.KubeletBootstrapSecretName(md, testNamespace)} {
			if _, err := env.kube.CoreV1().Secrets(settings).Get(ctx, name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		_, err := env.kube.RbacV1().RoleBindings(settings).Get(ctx, tokens.FetchAccessName(ref), metav1.GetOptions{})
		return err
	})
	t.Logf("namespace, the syncer's access and the MD's Secrets and RBAC back %s after the delete", time.Since(start).Round(time.Millisecond))
	token := fetchToken(t, payloadSecret(t, testNamespace, md, "bootstrap", func(*corev1.Secret) error { return nil }))
	eventually(t, 30*time.Second, func() error {
		_, err := asToken(t, token).CoreV1().Secrets(settings).Get(ctx, machinecontroller.SecretName(md, testNamespace, osm.PayloadTypeProvisioning), metav1.GetOptions{})
		return err
	})
	// The fetch token lives in tokens.FetchNamespace, which was not deleted:
	// the token of before still authenticates, and the payloads hand it out.
	if token != oldToken {
		t.Errorf("the fetch token changed with cloud-init-settings, whose deletion does not touch it")
	}
}

// The syncer may create RoleBindings and namespaces anywhere as far as RBAC
// goes (it must, to restore cloud-init-settings); the admission policy of
// artifacts/deploy keeps it to cloud-init-settings.
func TestSyncerAccessCannotBeBoundElsewhere(t *testing.T) {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(env.dir, "osm-apiserver.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	osm, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-escalation", Namespace: testNamespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: syncer.AccessClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: "osm-apiserver"}},
	}
	if _, err := osm.RbacV1().RoleBindings(testNamespace).Create(ctx, binding, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "cloud-init-settings, osm-fetch and osm-node-join only") {
		t.Errorf("the syncer bound its access in %s: %v", testNamespace, err)
		_ = env.kube.RbacV1().RoleBindings(testNamespace).Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-not-for-osm"}}
	if _, err := osm.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "no namespace but cloud-init-settings") {
		t.Errorf("the syncer created namespace %s: %v", ns.Name, err)
	}
	// What it may do there, it may.
	if _, err := osm.RbacV1().RoleBindings(machinecontroller.CloudInitSettingsNamespace).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-allowed"}, RoleRef: binding.RoleRef, Subjects: binding.Subjects,
	}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("the syncer cannot bind its access in cloud-init-settings: %v", err)
	}
}
