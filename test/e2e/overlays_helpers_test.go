package e2e

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
)

// grant is one ClusterRole of artifacts/deploy bound to a test's
// ServiceAccount: in namespace, or cluster-wide when namespace is "".
type grant struct {
	clusterRole, namespace string
}

// tenantToken returns a token of a new ServiceAccount in ns bound to
// clusterRole in ns.
func tenantToken(t *testing.T, ns, clusterRole string) string {
	t.Helper()
	return serviceAccountToken(t, ns, "e2e-tenant", grant{clusterRole, ns})
}

// serviceAccountToken creates ServiceAccount ns/name with the grants and
// returns a token for it; everything goes when the test ends.
func serviceAccountToken(t *testing.T, ns, name string, grants ...grant) string {
	t.Helper()
	ctx := context.Background()
	create := metav1.CreateOptions{}
	if _, err := env.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, create); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.kube.CoreV1().ServiceAccounts(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}
	for _, g := range grants {
		if _, err := env.kube.RbacV1().ClusterRoles().Get(ctx, g.clusterRole, metav1.GetOptions{}); err != nil {
			t.Fatalf("ClusterRole %s of artifacts/deploy: %v", g.clusterRole, err)
		}
		ref := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: g.clusterRole}
		bindingName := name + "-" + ns
		if g.namespace == "" {
			b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: bindingName + "-" + g.clusterRole[4:]}, RoleRef: ref, Subjects: subjects}
			if _, err := env.kube.RbacV1().ClusterRoleBindings().Create(ctx, b, create); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = env.kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), b.Name, metav1.DeleteOptions{})
			})
			continue
		}
		b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: bindingName + "-" + g.clusterRole[4:], Namespace: g.namespace}, RoleRef: ref, Subjects: subjects}
		if _, err := env.kube.RbacV1().RoleBindings(g.namespace).Create(ctx, b, create); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = env.kube.RbacV1().RoleBindings(b.Namespace).Delete(context.Background(), b.Name, metav1.DeleteOptions{})
		})
	}
	tr, err := env.kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, create)
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// clientFor is a client of the test cluster that authenticates with token only.
func clientFor(t *testing.T, token string) osmclient.Interface {
	t.Helper()
	cfg := rest.AnonymousClientConfig(env.config)
	cfg.BearerToken = token
	cfg.Timeout = time.Minute
	c, err := osmclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
