package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// bearerRE finds the fetch token, a ServiceAccount token (a JWT).
var bearerRE = regexp.MustCompile(`Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)`)

// fetchToken returns the token in the bootstrap payload of an e2e-ubuntu MD,
// after replacing the machine name as machine-controller does.
func fetchToken(t *testing.T, bootstrap *corev1.Secret) string {
	t.Helper()
	userData := strings.ReplaceAll(string(bootstrap.Data[machinecontroller.SecretDataKey]), machinecontroller.MachineNamePlaceholder, "machine-1")
	script := cloudConfigFile(t, userData, "/opt/bin/fetch-provisioning")
	m := bearerRE.FindStringSubmatch(script)
	if m == nil {
		t.Fatalf("no fetch token in the fetch script:\n%s", script)
	}
	return m[1]
}

// asToken returns a client of kube-apiserver authenticated by token only,
// verifying the server's certificate as the node does.
func asToken(t *testing.T, token string) kubernetes.Interface {
	t.Helper()
	return asTokenAt(t, env.config, token)
}

// asTokenAt is asToken of the kube-apiserver of cluster.
func asTokenAt(t *testing.T, cluster *rest.Config, token string) kubernetes.Interface {
	t.Helper()
	cfg := &rest.Config{Host: cluster.Host, BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAData: cluster.CAData, CAFile: cluster.CAFile}}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSyncerSecretsAndLeastPrivilegeFetchToken(t *testing.T) {
	ns, osp := startSyncerWithMD(t)
	createMD(t, syncerMD(ns, "beta", osp, "1"))

	bootstrap := payloadSecret(t, ns, "alpha", "bootstrap", annotated("1", "v1.0.0"))
	provisioning := payloadSecret(t, ns, "alpha", "provisioning", annotated("1", "v1.0.0"))
	payloadSecret(t, ns, "beta", "provisioning", annotated("1", "v1.0.0"))
	if bootstrap.Type != corev1.SecretTypeOpaque || len(bootstrap.Data[machinecontroller.SecretDataKey]) == 0 {
		t.Fatalf("bootstrap secret: type %q, %d bytes of cloud-config", bootstrap.Type, len(bootstrap.Data[machinecontroller.SecretDataKey]))
	}

	client := asToken(t, fetchToken(t, bootstrap))
	ctx := testContext(t)
	secrets := client.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace)
	own, err := secrets.Get(ctx, provisioning.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("fetch token cannot GET its own provisioning secret: %v", err)
	}
	if !bytes.Equal(own.Data[machinecontroller.SecretDataKey], provisioning.Data[machinecontroller.SecretDataKey]) {
		t.Errorf("fetched provisioning payload differs from the secret")
	}
	kubeconfig, err := secrets.Get(ctx, machinecontroller.KubeletBootstrapSecretName("alpha", ns), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("fetch token cannot GET its kubelet bootstrap kubeconfig: %v", err)
	}
	if !bytes.Contains(kubeconfig.Data["kubeconfig"], []byte("token: ")) {
		t.Errorf("kubelet bootstrap kubeconfig holds no token:\n%s", kubeconfig.Data["kubeconfig"])
	}
	// Another MD's Secrets, its own bootstrap payload (only edge MDs need it)
	// and the Secret holding the token itself are not its to read.
	for _, name := range []string{machinecontroller.SecretName("beta", ns, osm.PayloadTypeProvisioning), machinecontroller.KubeletBootstrapSecretName("beta", ns),
		bootstrap.Name} {
		if _, err := secrets.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("GET %s: %v, want 403", name, err)
		}
	}
	if _, err := secrets.List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("LIST of secrets: %v, want 403", err)
	}
	// Nor the Secret holding the token itself, in its own namespace.
	if _, err := client.CoreV1().Secrets(tokens.FetchNamespace).Get(ctx, tokens.FetchTokenSecretName(machinecontroller.Ref{Namespace: ns, Name: "alpha"}), metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("GET of its own token secret: %v, want 403", err)
	}
	if _, err := client.CoreV1().Secrets("kube-system").Get(ctx, "bootstrap-token-abcdef", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("GET of a kube-system secret: %v, want 403", err)
	}
}

func TestSyncerReRendersAndKeepsLastGood(t *testing.T) {
	ns, osp := startSyncerWithMD(t)
	payloadSecret(t, ns, "alpha", "bootstrap", annotated("1", "v1.0.0"))

	// A new profile version re-renders without touching the MD.
	applyProfile(t, e2eProfile(t, osp, "v2.0.0"))
	payloadSecret(t, ns, "alpha", "bootstrap", annotated("1", "v2.0.0"))
	// So do a new revision and a new annotation.
	annotateMD(t, ns, "alpha", machinecontroller.AnnotationMDRevision, "2")
	payloadSecret(t, ns, "alpha", "provisioning", annotated("2", "v2.0.0"))
	before := payloadSecret(t, ns, "alpha", "bootstrap", annotated("2", "v2.0.0"))
	annotateMD(t, ns, "alpha", "e2e/extra", "x")
	good := payloadSecret(t, ns, "alpha", "bootstrap", func(s *corev1.Secret) error {
		if s.Annotations[machinecontroller.AnnotationSecretMDAnnotationsHash] == before.Annotations[machinecontroller.AnnotationSecretMDAnnotationsHash] {
			return fmt.Errorf("annotations hash unchanged")
		}
		return nil
	})

	// A broken template keeps the last good Secrets and warns on the MD.
	broken := e2eProfile(t, osp, "v3.0.0-broken")
	broken.Spec.ProvisioningConfig.Files = append(broken.Spec.ProvisioningConfig.Files, ospv1alpha1.File{
		Path: "/etc/broken", Content: ospv1alpha1.FileContent{Inline: &ospv1alpha1.FileContentInline{Data: "{{ .Nope "}},
	})
	applyProfile(t, broken)
	eventually(t, time.Minute, func() error {
		events, err := env.kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
			FieldSelector: "involvedObject.name=alpha,type=Warning,reason=RenderFailed"})
		if err != nil {
			return err
		}
		if len(events.Items) == 0 {
			return fmt.Errorf("no RenderFailed warning on the MD yet")
		}
		return nil
	})
	// The API, rendering through the same code, shows the error on the OSC.
	eventually(t, time.Minute, func() error {
		osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).Get(context.Background(), "alpha", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !strings.Contains(osc.Status.RenderError, "/etc/broken") {
			return fmt.Errorf("OSC render error %q does not name the broken file", osc.Status.RenderError)
		}
		return nil
	})
	after, err := env.kube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(context.Background(), good.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Content, not resourceVersion: the harness's osm-apiserver runs a syncer of
	// its own beside this one, and a write of the same content by the one that
	// saw the last good render later is not a change.
	if !bytes.Equal(after.Data[machinecontroller.SecretDataKey], good.Data[machinecontroller.SecretDataKey]) ||
		!maps.Equal(after.Annotations, good.Annotations) {
		t.Errorf("bootstrap secret changed after a failed render: annotations %v, were %v", after.Annotations, good.Annotations)
	}

	// Fixing the profile recovers.
	applyProfile(t, e2eProfile(t, osp, "v4.0.0"))
	payloadSecret(t, ns, "alpha", "bootstrap", annotated("2", "v4.0.0"))
}

func TestSyncerDeleteCleansUpWithoutFinalizer(t *testing.T) {
	ns, _ := startSyncerWithMD(t)
	payloadSecret(t, ns, "alpha", "bootstrap", annotated("1", "v1.0.0"))
	ref := machinecontroller.Ref{Namespace: ns, Name: "alpha"}
	ctx := testContext(t)
	if n := countOwned(t, ref); n != 5 {
		t.Fatalf("%d secrets for the MD, want 5 (2 payloads, kubeconfig, 2 tokens)", n)
	}

	if err := env.dynamic.Resource(mdResource).Namespace(ns).Delete(ctx, "alpha", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.dynamic.Resource(mdResource).Namespace(ns).Get(ctx, "alpha", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("MD still there right after delete: %v", err)
	}
	eventually(t, 30*time.Second, func() error {
		if n := countOwned(t, ref); n != 0 {
			return fmt.Errorf("%d secrets of the deleted MD left", n)
		}
		if _, err := env.kube.RbacV1().Roles(machinecontroller.CloudInitSettingsNamespace).Get(ctx, tokens.FetchAccessName(ref), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("role left: %w", err)
		}
		if _, err := env.kube.RbacV1().RoleBindings(machinecontroller.CloudInitSettingsNamespace).Get(ctx, tokens.FetchAccessName(ref), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("role binding left: %w", err)
		}
		return nil
	})
}

// countOwned counts the Secrets written for ref in kube-system, cloud-init-settings and the fetch tokens' namespace.
func countOwned(t *testing.T, ref machinecontroller.Ref) int {
	t.Helper()
	n := 0
	for _, ns := range []string{"kube-system", machinecontroller.CloudInitSettingsNamespace, tokens.FetchNamespace} {
		l, err := env.kube.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{LabelSelector: ref.Selector().String()})
		if err != nil {
			t.Fatal(err)
		}
		n += len(l.Items)
	}
	return n
}

// TestSyncerExtendsTokens moves the kubelet bootstrap token's expiration close
// to now, as time would, and expects the syncer to extend it without changing
// the token or any payload. It works whatever --bootstrap-token-ttl the syncer
// runs with.
func TestSyncerExtendsTokens(t *testing.T) {
	ns, _ := startSyncerWithMD(t)
	bootstrap := payloadSecret(t, ns, "alpha", "bootstrap", annotated("1", "v1.0.0"))
	token := kubeletToken(t, ns, "alpha")
	tokens := env.kube.CoreV1().Secrets("kube-system")
	name := "bootstrap-token-" + strings.Split(token, ".")[0]
	s, err := tokens.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	soon := time.Now().Add(time.Minute).UTC().Truncate(time.Second)
	s.Data["expiration"] = []byte(soon.Format(time.RFC3339))
	if _, err := tokens.Update(context.Background(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		got, err := tokens.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		exp, err := time.Parse(time.RFC3339, string(got.Data["expiration"]))
		if err != nil {
			return err
		}
		if !exp.After(soon.Add(time.Minute)) {
			return fmt.Errorf("expiration still %s", exp)
		}
		if !bytes.Equal(got.Data["token-secret"], s.Data["token-secret"]) {
			t.Fatalf("extending changed the token")
		}
		return nil
	})
	// The extended token still authenticates and the payload did not change.
	if user := whoAmI(t, token); user.Username != "system:bootstrap:"+strings.Split(token, ".")[0] {
		t.Errorf("extended token authenticates as %q", user.Username)
	}
	now, err := env.kube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(context.Background(), bootstrap.Name, metav1.GetOptions{})
	if err != nil || now.ResourceVersion != bootstrap.ResourceVersion {
		t.Errorf("bootstrap payload rewritten by a token extension (%v)", err)
	}
}

// kubeletTokenRE finds the token in the kubelet's bootstrap kubeconfig.
var kubeletTokenRE = regexp.MustCompile(`token: ([a-z0-9]{6}\.[a-z0-9]{16})`)

// kubeletToken returns the kubelet bootstrap token of MD ns/md.
func kubeletToken(t *testing.T, ns, md string) string {
	t.Helper()
	s, err := env.kube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(context.Background(),
		machinecontroller.KubeletBootstrapSecretName(md, ns), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := kubeletTokenRE.FindSubmatch(s.Data[machinecontroller.KubeconfigDataKey])
	if m == nil {
		t.Fatalf("no token in the kubelet bootstrap kubeconfig:\n%s", s.Data[machinecontroller.KubeconfigDataKey])
	}
	return string(m[1])
}

func TestSyncerLeaderFailoverConverges(t *testing.T) {
	ns := syncerNamespace(t)
	osp := "e2e-syncer-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	replicas := map[string]*syncerReplica{"a": startSyncer(t, "a", nil), "b": startSyncer(t, "b", nil)}
	const count = 30
	for i := range count {
		createMD(t, syncerMD(ns, fmt.Sprintf("md-%02d", i), osp, "1"))
	}
	// Kill the leader mid-sync; the other replica takes over.
	leader := leaseHolder(t)
	time.Sleep(300 * time.Millisecond)
	replicas[leader].stop()
	for i := range count {
		payloadSecret(t, ns, fmt.Sprintf("md-%02d", i), "bootstrap", annotated("1", "v1.0.0"))
		payloadSecret(t, ns, fmt.Sprintf("md-%02d", i), "provisioning", annotated("1", "v1.0.0"))
	}
	if now := leaseHolder(t); now == leader {
		t.Errorf("lease still held by the stopped replica %s", leader)
	}
	for i := range count {
		if n := countOwned(t, machinecontroller.Ref{Namespace: ns, Name: fmt.Sprintf("md-%02d", i)}); n != 5 {
			t.Errorf("md-%02d: %d secrets, want 5: something was duplicated or lost", i, n)
		}
	}
}

// leaseHolder waits for the in-process syncers' Lease to have a holder.
func leaseHolder(t *testing.T) string {
	t.Helper()
	var holder string
	eventually(t, 30*time.Second, func() error {
		l, err := env.kube.CoordinationV1().Leases("kube-system").Get(context.Background(), syncerLease, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			return fmt.Errorf("no holder")
		}
		holder = *l.Spec.HolderIdentity
		return nil
	})
	return holder
}
