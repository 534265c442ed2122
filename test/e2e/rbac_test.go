package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
)

// TestReaderOfConfigsCannotReadPayloads: payloads hold tokens, so they are a separate
// resource; a user granted only operatingsystemconfigs (the reader ClusterRole of
// artifacts/deploy, bound in one namespace) gets 403 on them.
func TestReaderOfConfigsCannotReadPayloads(t *testing.T) {
	ctx := testContext(t)
	token := oscReaderToken(ctx, t)
	cfg := rest.AnonymousClientConfig(env.config)
	cfg.BearerToken = token
	reader, err := osmclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	oscs := reader.OsmV1alpha1().OperatingSystemConfigs(testNamespace)
	// RBAC changes reach the authorizer's informers within moments.
	eventually(t, 30*time.Second, func() error {
		_, err := oscs.Get(ctx, "e2e-ubuntu-aws", getOptions())
		return err
	})
	if _, err := oscs.List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list operatingsystemconfigs: %v", err)
	}
	forbidden := map[string]error{}
	_, forbidden["get payload"] = reader.OsmV1alpha1().ProvisioningPayloads(testNamespace).Get(ctx, "e2e-ubuntu-aws-bootstrap", getOptions())
	_, forbidden["list payloads"] = reader.OsmV1alpha1().ProvisioningPayloads(testNamespace).List(ctx, metav1.ListOptions{})
	_, forbidden["osc in another namespace"] = reader.OsmV1alpha1().OperatingSystemConfigs("default").List(ctx, metav1.ListOptions{})
	for what, err := range forbidden {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: got %v, want 403 Forbidden", what, err)
		}
	}

	kubeconfig := writeTokenKubeconfig(t, token)
	if out := kubectl(t, "--kubeconfig", kubeconfig, "get", "osc", "-n", testNamespace); !strings.Contains(out, "e2e-ubuntu-aws") {
		t.Errorf("kubectl get osc as the reader:\n%s", out)
	}
	if out := kubectlFails(t, "--kubeconfig", kubeconfig, "get", "provisioningpayloads", "-n", testNamespace); !strings.Contains(out, "Forbidden") {
		t.Errorf("kubectl get provisioningpayloads as the reader: %s", out)
	}
}

// readerRole is the ClusterRole of artifacts/deploy that grants reading OSCs only;
// the harness applies it with the rest of the RBAC.
const readerRole = "osm:operatingsystemconfigs-reader"

// oscReaderToken creates a ServiceAccount bound to readerRole in the test namespace
// and returns a token for it (TokenRequest works without kube-controller-manager).
func oscReaderToken(ctx context.Context, t *testing.T) string {
	t.Helper()
	const name = "e2e-osc-reader"
	if _, err := env.kube.RbacV1().ClusterRoles().Get(ctx, readerRole, metav1.GetOptions{}); err != nil {
		t.Fatalf("ClusterRole %s of artifacts/deploy: %v", readerRole, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: readerRole},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: testNamespace}},
	}
	create := metav1.CreateOptions{}
	if _, err := env.kube.CoreV1().ServiceAccounts(testNamespace).Create(ctx, sa, create); err != nil {
		t.Fatal(err)
	}
	if _, err := env.kube.RbacV1().RoleBindings(testNamespace).Create(ctx, binding, create); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, err := range []error{
			env.kube.RbacV1().RoleBindings(testNamespace).Delete(ctx, name, metav1.DeleteOptions{}),
			env.kube.CoreV1().ServiceAccounts(testNamespace).Delete(ctx, name, metav1.DeleteOptions{}),
		} {
			if err != nil {
				t.Errorf("clean-up: %v", err)
			}
		}
	})
	tr, err := env.kube.CoreV1().ServiceAccounts(testNamespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, create)
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// writeTokenKubeconfig writes a kubeconfig for the test cluster that authenticates with token only.
func writeTokenKubeconfig(t *testing.T, token string) string {
	t.Helper()
	admin, err := clientcmd.LoadFromFile(env.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters = admin.Clusters
	cfg.AuthInfos["reader"] = &clientcmdapi.AuthInfo{Token: token}
	for name, c := range admin.Contexts {
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: c.Cluster, AuthInfo: "reader"}
		cfg.CurrentContext = name
	}
	path := filepath.Join(t.TempDir(), "reader.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
