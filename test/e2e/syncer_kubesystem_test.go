package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// syncerIdentity returns a client with the identity the harness's
// osm-apiserver runs as: its ServiceAccount, with the RBAC and admission
// policies of artifacts/deploy.
func syncerIdentity(t *testing.T) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(env.dir, "osm-apiserver.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// RBAC lets the syncer write every Secret of kube-system; the admission policy
// of artifacts/deploy keeps its writes to the bootstrap tokens it manages and
// its serving certificate's Secret.
func TestSyncerWritesOnlyItsBootstrapTokensInKubeSystem(t *testing.T) {
	ctx := testContext(t)
	osm := syncerIdentity(t)
	secrets := osm.CoreV1().Secrets("kube-system")
	ours := map[string]string{machinecontroller.ManagedByLabel: machinecontroller.ManagedByValue}
	token := func(name string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: labels},
			Type:       corev1.SecretTypeBootstrapToken,
			StringData: map[string]string{"token-id": name[len(name)-6:], "token-secret": "0123456789abcdef", "usage-bootstrap-authentication": "true"},
		}
	}
	denied := func(what string, err error) {
		t.Helper()
		if err == nil || !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "osm-apiserver writes only its own bootstrap tokens") {
			t.Errorf("%s: want the admission policy's denial, got %v", what, err)
		}
	}
	admin := env.kube.CoreV1().Secrets("kube-system")
	cleanup := func(name string) {
		t.Cleanup(func() { _ = admin.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}

	// Another's Secret, and another's bootstrap token: not created, changed,
	// taken over or deleted.
	opaque := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "e2e-cloud-credentials", Namespace: "kube-system"}, StringData: map[string]string{"key": "value"}}
	cleanup(opaque.Name)
	_, err := secrets.Create(ctx, opaque, metav1.CreateOptions{})
	denied("create an Opaque secret", err)
	labelledOpaque := opaque.DeepCopy()
	labelledOpaque.Labels = ours
	_, err = secrets.Create(ctx, labelledOpaque, metav1.CreateOptions{})
	denied("create an Opaque secret with our label", err)
	_, err = secrets.Create(ctx, token("bootstrap-token-e2eusr", nil), metav1.CreateOptions{})
	denied("create a bootstrap token without our label", err)

	foreign := token("bootstrap-token-e2efor", map[string]string{"owner": "someone-else"})
	cleanup(foreign.Name)
	if _, err := admin.Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Create(ctx, opaque, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{foreign.Name, opaque.Name} {
		got, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		takeover := got.DeepCopy()
		takeover.Labels = ours
		_, err = secrets.Update(ctx, takeover, metav1.UpdateOptions{})
		denied("take over "+name, err)
		err = secrets.Delete(ctx, name, metav1.DeleteOptions{})
		denied("delete "+name, err)
		if _, err := admin.Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("%s after the syncer's attempts: %v", name, err)
		}
	}

	// Its own bootstrap tokens: created, updated and deleted.
	own := token("bootstrap-token-e2eown", ours)
	cleanup(own.Name)
	created, err := secrets.Create(ctx, own, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the syncer cannot create its bootstrap token: %v", err)
	}
	created.StringData = map[string]string{"expiration": "2099-01-01T00:00:00Z"}
	if _, err := secrets.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Errorf("the syncer cannot update its bootstrap token: %v", err)
	}
	// Nor may it give its own away: the label stays.
	got, err := secrets.Get(ctx, own.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unlabelled := got.DeepCopy()
	unlabelled.Labels = nil
	_, err = secrets.Update(ctx, unlabelled, metav1.UpdateOptions{})
	denied("remove our label from "+own.Name, err)
	if err := secrets.Delete(ctx, own.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("the syncer cannot delete its bootstrap token: %v", err)
	}

	// Its serving certificate's Secret: created and updated with our label
	// and type kubernetes.io/tls, never deleted; no other name or type.
	tls := func(name string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: labels},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{corev1.TLSCertKey: []byte("c"), corev1.TLSPrivateKeyKey: []byte("k")},
		}
	}
	const servingCert = "osm-apiserver-serving-cert"
	// A self-managed replica of another test may have made it.
	if err := admin.Delete(ctx, servingCert, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	cleanup(servingCert)
	_, err = secrets.Create(ctx, tls("e2e-other-tls", ours), metav1.CreateOptions{})
	denied("create another TLS secret", err)
	_, err = secrets.Create(ctx, tls(servingCert, nil), metav1.CreateOptions{})
	denied("create the serving certificate's secret without our label", err)
	opaqueCert := tls(servingCert, ours)
	opaqueCert.Type = corev1.SecretTypeOpaque
	_, err = secrets.Create(ctx, opaqueCert, metav1.CreateOptions{})
	denied("create the serving certificate's secret of type Opaque", err)
	cert, err := secrets.Create(ctx, tls(servingCert, ours), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("osm-apiserver cannot create its serving certificate's secret: %v", err)
	}
	cert.Data["ca.crt"] = []byte("x")
	if _, err := secrets.Update(ctx, cert, metav1.UpdateOptions{}); err != nil {
		t.Errorf("osm-apiserver cannot update its serving certificate's secret: %v", err)
	}
	err = secrets.Delete(ctx, servingCert, metav1.DeleteOptions{})
	denied("delete the serving certificate's secret", err)
}
