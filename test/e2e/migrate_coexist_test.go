package e2e

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/migrate"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// Upstream's getter token, which every node upstream provisioned holds in its
// user-data, reads every Secret of cloud-init-settings until migrate deletes
// it. The fetch tokens' Secrets are not there: the getter gets 403 on each of
// them, before migrate and while it runs. And migrate deletes only what is
// upstream's: Secrets of upstream's names or labels that another owns stay.
func TestUpstreamGetterReadsNoFetchTokenAndMigrateSparesLookAlikes(t *testing.T) {
	up := upstreamOSM(t)
	ctx := testContext(t)
	ns := fmt.Sprintf("e2e-coexist-%d", time.Now().UnixNano()%1_000_000_000)
	if _, err := env.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: ns, Labels: map[string]string{"e2e-migrate": "true"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	u := buildUpstreamState(t, up, ns)
	settings := machinecontroller.CloudInitSettingsNamespace

	// Look-alikes: pool-c's kubelet bootstrap kubeconfig, by upstream's name,
	// is now a user's; a bootstrap token with upstream's label for pool-a is
	// another tool's.
	userKubeconfig := ns + "-pool-c-kubelet-bootstrap-config"
	s, err := env.kube.CoreV1().Secrets(settings).Get(ctx, userKubeconfig, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Labels = map[string]string{machinecontroller.ManagedByLabel: "e2e-user"}
	if _, err := env.kube.CoreV1().Secrets(settings).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("%06d", time.Now().UnixNano()%1_000_000)
	foreignToken := "bootstrap-token-" + id
	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: foreignToken,
		Labels: map[string]string{migrate.BootstrapTokenLabel: migrate.UpstreamKey(machinecontroller.Ref{Namespace: ns, Name: "pool-a"}),
			machinecontroller.ManagedByLabel: "another-tool"}},
		Type: corev1.SecretTypeBootstrapToken,
		Data: map[string][]byte{"token-id": []byte(id), "token-secret": []byte("0123456789abcdef")}})

	// osm-apiserver takes the MDs over and issues their fetch tokens.
	var fetchSecrets []string
	eventually(t, time.Minute, func() error {
		fetchSecrets = fetchSecrets[:0]
		for _, md := range []string{"pool-a", "pool-b", "pool-c"} {
			name := tokens.FetchTokenSecretName(machinecontroller.Ref{Namespace: ns, Name: md})
			s, err := env.kube.CoreV1().Secrets(tokens.FetchNamespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(s.Data["token"]) == 0 {
				return fmt.Errorf("secret %s/%s holds no token yet", tokens.FetchNamespace, name)
			}
			fetchSecrets = append(fetchSecrets, name)
		}
		return nil
	})
	all, err := env.kube.CoreV1().Secrets(tokens.FetchNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: machinecontroller.PurposeLabel + "=" + tokens.PurposeFetch})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all.Items {
		if !strings.HasSuffix(s.Name, "-token") || s.Type != tokens.SecretTypeFetchToken {
			t.Errorf("secret %s/%s labelled as a fetch token: type %s", s.Namespace, s.Name, s.Type)
		}
		fetchSecrets = append(fetchSecrets, s.Name)
	}
	getter := asToken(t, u.getterToken)
	// readsNone checks that the getter reads no fetch token: 403 on each
	// Secret and on the list (401 once migrate deleted it), and none of
	// the Secrets it may read in cloud-init-settings holds one.
	readsNone := func() error {
		for _, name := range fetchSecrets {
			_, err := getter.CoreV1().Secrets(tokens.FetchNamespace).Get(ctx, name, metav1.GetOptions{})
			if !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) {
				return fmt.Errorf("the getter token's GET of secret %s/%s: %w, want 403", tokens.FetchNamespace, name, err)
			}
		}
		if _, err := getter.CoreV1().Secrets(tokens.FetchNamespace).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) {
			return fmt.Errorf("the getter token's LIST of secrets in %s: %w, want 403", tokens.FetchNamespace, err)
		}
		list, err := getter.CoreV1().Secrets(settings).List(ctx, metav1.ListOptions{})
		if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
			return nil // migrate deleted the token, or its Role
		}
		if err != nil {
			return fmt.Errorf("the getter token's LIST of secrets in %s: %w", settings, err)
		}
		for _, s := range list.Items {
			if s.Type == tokens.SecretTypeFetchToken || s.Labels[machinecontroller.PurposeLabel] == tokens.PurposeFetch {
				return fmt.Errorf("the getter token reads fetch token secret %s/%s", s.Namespace, s.Name)
			}
		}
		return nil
	}
	// Before migrate: the getter works (it reads upstream's Secrets) ...
	if _, err := getter.CoreV1().Secrets(settings).Get(ctx, fmt.Sprintf("pool-b-%s-provisioning-config", ns), metav1.GetOptions{}); err != nil {
		t.Fatalf("the getter token reads no Secret of cloud-init-settings: %v", err)
	}
	// ... and reads none of the fetch tokens.
	if err := readsNone(); err != nil {
		t.Fatalf("before migrate: %v", err)
	}
	t.Logf("before migrate: the getter token reads none of %d fetch token secrets", len(fetchSecrets))

	// Migrate in the middle: a Machine without a Node may be booting with
	// upstream's credentials, so the getter token and its Role stay.
	u.stopController(t)
	for md, kinds := range ourPayloadSecrets {
		for _, kind := range kinds {
			payloadSecret(t, ns, md, kind, func(s *corev1.Secret) error {
				if owner, ok := machinecontroller.Owner(s); !ok || owner.Name != md {
					return fmt.Errorf("%s is not osm-apiserver's yet", s.Name)
				}
				return nil
			})
		}
	}
	joining := &clusterv1alpha1.Machine{
		TypeMeta:   metav1.TypeMeta{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "Machine"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pool-a-5d8f7-joins"},
		Spec:       syncerMD(ns, "pool-a", "", "3").Spec.Template.Spec,
	}
	createObject(t, machineResource, joining)
	out, err := runMigrate(t, "--apply")
	if err == nil || !strings.Contains(out, "not yet: delete the getter token") {
		t.Fatalf("migrate --apply with a Machine joining: %v, want the getter token's deletion to wait:\n%s", err, out)
	}
	if _, err := getter.CoreV1().Secrets(settings).Get(ctx, fmt.Sprintf("pool-b-%s-provisioning-config", ns), metav1.GetOptions{}); err != nil {
		t.Fatalf("the getter token reads no Secret of cloud-init-settings half-way: %v", err)
	}
	if err := readsNone(); err != nil {
		t.Fatalf("half-way through migrate: %v", err)
	}
	if err := env.dynamic.Resource(machineResource).Namespace(ns).Delete(ctx, joining.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// While migrate runs to the end.
	var checks atomic.Int32
	var failed atomic.Value
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := readsNone(); err != nil {
				failed.Store(err)
				return
			}
			checks.Add(1)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	out, err = runMigrate(t, "--apply")
	close(done)
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		t.Errorf("while migrate ran: %v", err)
	}
	t.Logf("while migrate ran: %d checks, the getter token read no fetch token", checks.Load())
	if err != nil || !strings.Contains(out, "Done.") {
		t.Fatalf("migrate --apply: %v\n%s", err, out)
	}
	t.Log(out)

	// The look-alikes stay, and the plan says why.
	inOrder(t, out, "Left alone, named like upstream's objects but not upstream's:",
		"Secret cloud-init-settings/"+userKubeconfig+": labelled "+machinecontroller.ManagedByLabel+"=e2e-user",
		"Secret kube-system/"+foreignToken+": labelled "+machinecontroller.ManagedByLabel+"=another-tool")
	if _, err := env.kube.CoreV1().Secrets(settings).Get(ctx, userKubeconfig, metav1.GetOptions{}); err != nil {
		t.Errorf("the user's secret %s/%s: %v", settings, userKubeconfig, err)
	}
	if _, err := env.kube.CoreV1().Secrets("kube-system").Get(ctx, foreignToken, metav1.GetOptions{}); err != nil {
		t.Errorf("another tool's bootstrap token kube-system/%s: %v", foreignToken, err)
	}
	// Upstream's own went.
	if _, err := env.kube.CoreV1().Secrets(settings).Get(ctx, ns+"-pool-a-kubelet-bootstrap-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("upstream's kubelet bootstrap kubeconfig of pool-a: %v, want it deleted", err)
	}
}
