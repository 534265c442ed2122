package tokens

import (
	"context"
	"strings"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens/tokenstest"
)

// issuerHarness is a FetchIssuer over a fake client whose TokenRequests are
// answered, reading through real informers, with a clock the test moves.
type issuerHarness struct {
	t      *testing.T
	client *fake.Clientset
	issuer *FetchIssuer
	now    time.Time
}

func newIssuerHarness(t *testing.T, ttl, renewBefore time.Duration) *issuerHarness {
	t.Helper()
	h := &issuerHarness{t: t, client: machinecontrollertest.NewClientset(), now: epoch}
	clock := func() time.Time { return h.now }
	tokenstest.IssueTokens(h.client, clock)
	tokenInformer := newTestInformer(h.client)
	accounts := informers.NewSharedInformerFactoryWithOptions(h.client, 0, informers.WithNamespace(FetchNamespace))
	saInformer := accounts.Core().V1().ServiceAccounts()
	saLister := saInformer.Lister()
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	tokenInformer.Start(stop)
	accounts.Start(stop)
	accounts.WaitForCacheSync(stop)
	// Synced before the first write: a fake clientset hands objects created
	// between an informer's list and watch to it unshared-copied, and the
	// informer's transform would race with the fake's reads of them.
	cache.WaitForCacheSync(stop, tokenInformer.HasSynced)
	h.issuer = &FetchIssuer{Client: h.client, Secrets: tokenInformer.FetchLister(), ServiceAccounts: saLister,
		TTL: ttl, RenewBefore: renewBefore, Now: clock}
	return h
}

// ensure runs Ensure and waits until the caches hold what it wrote.
func (h *issuerHarness) ensure() FetchToken {
	h.t.Helper()
	tok, err := h.issuer.Ensure(context.Background(), ref)
	if err != nil {
		h.t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		got, ok := LookupFetch(h.issuer.Secrets, ref)
		_, err := h.issuer.ServiceAccounts.ServiceAccounts(FetchNamespace).Get(FetchAccessName(ref))
		return ok && got == tok.Value && err == nil, nil
	})
	if err != nil {
		h.t.Fatalf("caches never saw the token: %v", err)
	}
	return tok
}

func (h *issuerHarness) writes() int {
	n := 0
	for _, a := range h.client.Actions() {
		if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" {
			n++
		}
	}
	return n
}

func TestFetchIssuerEnsure(t *testing.T) {
	h := newIssuerHarness(t, 24*time.Hour, 12*time.Hour)
	first := h.ensure()
	ctx := context.Background()
	sa, err := h.client.CoreV1().ServiceAccounts(FetchNamespace).Get(ctx, FetchAccessName(ref), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Errorf("service account mounts its token into pods")
	}
	secret, err := h.client.CoreV1().Secrets(FetchNamespace).Get(ctx, FetchTokenSecretName(ref), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if secret.Type != SecretTypeFetchToken || !ownedBy(secret, ref, PurposeFetch) || string(secret.Data[keyFetchToken]) != first.Value {
		t.Errorf("token secret: type %q, labels %v, holds the token: %v", secret.Type, secret.Labels, string(secret.Data[keyFetchToken]) == first.Value)
	}
	if !first.boundTo(sa, secret) || !first.Expiration.Equal(epoch.Add(24*time.Hour)) {
		t.Errorf("token %+v not bound to %s and %s for 24h", first.claims, sa.Name, secret.Name)
	}

	// Until it is due, nothing is written.
	h.client.ClearActions()
	h.now = epoch.Add(11 * time.Hour)
	if again := h.ensure(); again.Value != first.Value || h.writes() != 0 {
		t.Errorf("%d writes, same token %v: want none, the same token", h.writes(), again.Value == first.Value)
	}

	// Due: a new token in the same Secret.
	h.now = epoch.Add(12*time.Hour + time.Second)
	renewed := h.ensure()
	if renewed.Value == first.Value || !renewed.Expiration.Equal(h.now.Truncate(time.Second).Add(24*time.Hour)) {
		t.Errorf("renewed token: same value %v, expiration %v", renewed.Value == first.Value, renewed.Expiration)
	}
}

func TestFetchIssuerReplacesTokensThatNoLongerFit(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(h *issuerHarness)
	}{
		"shorter TTL": {change: func(h *issuerHarness) { h.issuer.TTL, h.issuer.RenewBefore = time.Hour, 30*time.Minute }},
		"service account recreated": {change: func(h *issuerHarness) {
			sa, err := h.client.CoreV1().ServiceAccounts(FetchNamespace).Get(context.Background(), FetchAccessName(ref), metav1.GetOptions{})
			if err != nil {
				h.t.Fatal(err)
			}
			sa.UID = "recreated"
			if err := h.client.Tracker().Update(corev1.SchemeGroupVersion.WithResource("serviceaccounts"), sa, FetchNamespace); err != nil {
				h.t.Fatal(err)
			}
			h.waitFor(func() bool {
				got, err := h.issuer.ServiceAccounts.ServiceAccounts(FetchNamespace).Get(sa.Name)
				return err == nil && got.UID == "recreated"
			})
		}},
		"garbage stored": {change: func(h *issuerHarness) {
			s, err := h.client.CoreV1().Secrets(FetchNamespace).Get(context.Background(), FetchTokenSecretName(ref), metav1.GetOptions{})
			if err != nil {
				h.t.Fatal(err)
			}
			s.Data[keyFetchToken] = []byte("not-a-jwt")
			if _, err := h.client.CoreV1().Secrets(FetchNamespace).Update(context.Background(), s, metav1.UpdateOptions{}); err != nil {
				h.t.Fatal(err)
			}
			h.waitFor(func() bool { got, _ := LookupFetch(h.issuer.Secrets, ref); return got == "not-a-jwt" })
		}},
	} {
		t.Run(name, func(t *testing.T) {
			h := newIssuerHarness(t, 24*time.Hour, 12*time.Hour)
			first := h.ensure()
			tc.change(h)
			if next := h.ensure(); next.Value == first.Value {
				t.Errorf("token kept")
			}
		})
	}
}

func (h *issuerHarness) waitFor(cond func() bool) {
	h.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		h.t.Fatal(err)
	}
}

func TestFetchIssuerRefusesAForeignSecret(t *testing.T) {
	h := newIssuerHarness(t, 24*time.Hour, 12*time.Hour)
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: FetchTokenSecretName(ref), Namespace: FetchNamespace}}
	if _, err := h.client.CoreV1().Secrets(FetchNamespace).Create(context.Background(), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := h.issuer.Ensure(context.Background(), ref)
	if err == nil || !strings.Contains(err.Error(), "does not hold the fetch token") {
		t.Errorf("Ensure over a foreign secret: %v", err)
	}
}

func TestFetchIssuerDelete(t *testing.T) {
	h := newIssuerHarness(t, 24*time.Hour, 12*time.Hour)
	h.ensure()
	if err := h.issuer.Delete(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := h.client.CoreV1().Secrets(FetchNamespace).Get(ctx, FetchTokenSecretName(ref), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("token secret after Delete: %v", err)
	}
	if _, err := h.client.CoreV1().ServiceAccounts(FetchNamespace).Get(ctx, FetchAccessName(ref), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("service account after Delete: %v", err)
	}
	if err := h.issuer.Delete(ctx, ref); err != nil {
		t.Errorf("second Delete: %v", err)
	}
}

func TestRenewAt(t *testing.T) {
	tests := []struct {
		name             string
		life, ttl, renew time.Duration
		want             time.Duration // after issue
	}{
		{"as requested", 24 * time.Hour, 24 * time.Hour, 12 * time.Hour, 12 * time.Hour},
		{"capped by the server", time.Hour, 24 * time.Hour, 12 * time.Hour, 30 * time.Minute},
		{"short renewal", 10 * time.Minute, 10 * time.Minute, 10*time.Minute - 10*time.Second, 10 * time.Second},
	}
	for _, tc := range tests {
		tok := FetchToken{IssuedAt: epoch, Expiration: epoch.Add(tc.life)}
		if got := tok.RenewAt(tc.ttl, tc.renew).Sub(epoch); got != tc.want {
			t.Errorf("%s: renewed %v after issue, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseFetchTokenRefusesWhatIsNoToken(t *testing.T) {
	noExp, _ := tokenstest.JWT(map[string]any{"iat": 1})
	for _, s := range []string{"", "abcdef.0123456789abcdef", "a.!!!.c", "a.e30.c", noExp} {
		if _, err := ParseFetchToken(s); err == nil {
			t.Errorf("ParseFetchToken(%q) accepted it", s)
		}
	}
}

// LookupFetch hands out the cached Secret's bytes without copying them.
func TestLookupFetchDoesNotCopyTheToken(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	secret := fetchTokenSecret(ref)
	secret.Data = map[string][]byte{keyFetchToken: []byte("header.payload.signature")}
	if err := indexer.Add(secret); err != nil {
		t.Fatal(err)
	}
	got, ok := LookupFetch(corev1listers.NewSecretLister(indexer), ref)
	if !ok || got != "header.payload.signature" {
		t.Fatalf("LookupFetch = %q, %v", got, ok)
	}
	if unsafe.StringData(got) != unsafe.SliceData(secret.Data[keyFetchToken]) {
		t.Errorf("the token was copied")
	}
}
