package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/server"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// whoAmI returns the user kube-apiserver takes token for.
func whoAmI(t *testing.T, token string) authenticationv1.UserInfo {
	t.Helper()
	r, err := asToken(t, token).AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview: %v", err)
	}
	return r.Status.UserInfo
}

// revoked says whether kube-apiserver refuses token (401).
func revoked(t *testing.T, token string) error {
	_, err := asToken(t, token).AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case err == nil:
		return errors.New("token still authenticates")
	case !apierrors.IsUnauthorized(err):
		return fmt.Errorf("want 401 Unauthorized: %w", err)
	}
	return nil
}

// The fetch token, which anyone who reads a VM's user-data has, is the MD's
// own ServiceAccount's: in a cluster that lets system:bootstrappers create
// CSRs (as many do), the kubelet's bootstrap token may, the fetch token may not.
func TestFetchCredentialCannotBootstrapNodes(t *testing.T) {
	ns, _ := startSyncerWithMD(t)
	bootstrap := payloadSecret(t, ns, "alpha", "bootstrap", annotated("1", "v1.0.0"))
	fetch := fetchToken(t, bootstrap)
	ref := machinecontroller.Ref{Namespace: ns, Name: "alpha"}

	user := whoAmI(t, fetch)
	if want := "system:serviceaccount:" + tokens.FetchNamespace + ":" + tokens.FetchAccessName(ref); user.Username != want {
		t.Errorf("fetch token is %q, want %q", user.Username, want)
	}
	for _, g := range user.Groups {
		if strings.HasPrefix(g, "system:bootstrappers") {
			t.Errorf("fetch token in group %q", g)
		}
	}
	t.Logf("fetch token: %d bytes, user %s, groups %v", len(fetch), user.Username, user.Groups)

	ctx := testContext(t)
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-bootstrappers-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:bootstrappers"}},
	}
	if _, err := env.kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
	})
	kubelet := kubeletToken(t, ns, "alpha")
	// The binding works: the kubelet's token may ask for a node certificate
	// (once the authorizer's cache has the binding).
	eventually(t, 30*time.Second, func() error {
		csr, err := asToken(t, kubelet).CertificatesV1().CertificateSigningRequests().Create(ctx, nodeCSR(t, ns), metav1.CreateOptions{})
		if err == nil {
			_ = env.kube.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{})
		}
		return err
	})
	if _, err := asToken(t, fetch).CertificatesV1().CertificateSigningRequests().Create(ctx, nodeCSR(t, ns), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("CSR with the fetch token: %v, want 403", err)
	}
}

// nodeCSR is a kubelet's request for a client certificate.
func nodeCSR(t *testing.T, name string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:" + name, Organization: []string{"system:nodes"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-node-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
}

// A fetch token is replaced before it expires, and the payloads with it; the
// replaced one keeps working (a VM may be booting with it) until it expires or
// the MD goes, which revokes every fetch token of the MD at once.
func TestFetchCredentialRotationAndRevocation(t *testing.T) {
	ns := syncerNamespace(t)
	osp := "e2e-syncer-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	// Tokens of 10 minutes (kube-apiserver's minimum), replaced after 5 s.
	rotating := startSyncer(t, "rotating", func(c *server.Config) {
		c.Syncer.TokenTTL, c.Syncer.TokenRenewBefore = 10*time.Minute, 10*time.Minute-5*time.Second
	})
	createMD(t, syncerMD(ns, "alpha", osp, "1"))
	// The first token may be the harness's syncer's, of 24 hours: the
	// rotating syncer replaces a token that lives longer than it would issue.
	first := bootstrapTokenWhere(t, ns, "alpha", func(tok tokens.FetchToken) bool { return true })
	second := bootstrapTokenWhere(t, ns, "alpha", func(tok tokens.FetchToken) bool {
		return tok.Value != first.Value && tok.Expiration.Sub(tok.IssuedAt) == 10*time.Minute
	})
	third := bootstrapTokenWhere(t, ns, "alpha", func(tok tokens.FetchToken) bool { return tok.Value != second.Value })
	t.Logf("the bootstrap Secret got a new fetch token %s after the previous was issued, %s before it expires",
		third.IssuedAt.Sub(second.IssuedAt), second.Expiration.Sub(third.IssuedAt))
	// Let the token settle: the harness's syncer keeps a 10-minute token for 5 minutes.
	rotating.stop()
	settled := fetchToken(t, payloadSecret(t, ns, "alpha", "bootstrap", annotated("1", "v1.0.0")))
	ctx := testContext(t)
	provisioning := machinecontroller.SecretName("alpha", ns, osm.PayloadTypeProvisioning)
	all := map[string]string{"first": first.Value, "second": second.Value, "third": third.Value, "current": settled}
	for name, tok := range all {
		if _, err := asToken(t, tok).CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(ctx, provisioning, metav1.GetOptions{}); err != nil {
			t.Errorf("%s token: %v", name, err)
		}
	}

	if err := env.dynamic.Resource(mdResource).Namespace(ns).Delete(ctx, "alpha", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for name, tok := range all {
		eventually(t, 30*time.Second, func() error {
			if err := revoked(t, tok); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		})
	}
	t.Logf("fetch tokens revoked %s after the MD was deleted", time.Since(start).Round(time.Millisecond))
}

// bootstrapTokenWhere waits for the bootstrap payload of MD ns/name to hold a
// fetch token that satisfies ok, and returns it.
func bootstrapTokenWhere(t *testing.T, ns, name string, ok func(tokens.FetchToken) bool) tokens.FetchToken {
	t.Helper()
	var tok tokens.FetchToken
	payloadSecret(t, ns, name, "bootstrap", func(s *corev1.Secret) error {
		var err error
		if tok, err = tokens.ParseFetchToken(fetchToken(t, s)); err != nil {
			return err
		}
		if !ok(tok) {
			return fmt.Errorf("not yet the fetch token looked for")
		}
		return nil
	})
	return tok
}
