package tokens

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
)

var (
	ref   = machinecontroller.Ref{Namespace: "team-a", Name: "workers.eu-1"}
	epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

// setup returns a Manager over a fake client whose lister sees existing.
func setup(t *testing.T, now time.Time, existing ...*corev1.Secret) (*Manager, *fake.Clientset) {
	t.Helper()
	client := machinecontrollertest.NewClientset()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, Indexers())
	for _, s := range existing {
		if _, err := client.CoreV1().Secrets(s.Namespace).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := indexer.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	return &Manager{
		Client: client, Cache: indexer,
		TTL: 24 * time.Hour, RenewBefore: 12 * time.Hour, Now: func() time.Time { return now },
	}, client
}

func ours(purpose string, i int, expiration time.Time) *corev1.Secret {
	return newSecret(ref, purpose, "system:bootstrappers:x", Token{
		ID: candidateID(ref, purpose, i), Secret: "0123456789abcdef", Expiration: expiration,
	})
}

func TestManagerEnsure(t *testing.T) {
	req := Request{Ref: ref, Purpose: PurposeFetch, Groups: "system:bootstrappers:x"}
	foreign := ours(PurposeFetch, 0, epoch)
	foreign.Labels, foreign.Annotations = nil, nil
	tests := []struct {
		name           string
		existing       []*corev1.Secret
		wantID         string
		wantSecret     string // "" means newly generated
		wantExpiration time.Time
		wantWrites     int
	}{
		{
			name:   "no token: created",
			wantID: candidateID(ref, PurposeFetch, 0), wantExpiration: epoch.Add(24 * time.Hour), wantWrites: 1,
		},
		{
			name:     "far from expiry: untouched",
			existing: []*corev1.Secret{ours(PurposeFetch, 0, epoch.Add(20*time.Hour))},
			wantID:   candidateID(ref, PurposeFetch, 0), wantSecret: "0123456789abcdef",
			wantExpiration: epoch.Add(20 * time.Hour),
		},
		{
			name:     "near expiry: extended, same value",
			existing: []*corev1.Secret{ours(PurposeFetch, 0, epoch.Add(time.Hour))},
			wantID:   candidateID(ref, PurposeFetch, 0), wantSecret: "0123456789abcdef",
			wantExpiration: epoch.Add(24 * time.Hour), wantWrites: 1,
		},
		{
			name:     "expired: extended, same value",
			existing: []*corev1.Secret{ours(PurposeFetch, 0, epoch.Add(-time.Hour))},
			wantID:   candidateID(ref, PurposeFetch, 0), wantSecret: "0123456789abcdef",
			wantExpiration: epoch.Add(24 * time.Hour), wantWrites: 1,
		},
		{
			name:     "id taken by a foreign token: next id",
			existing: []*corev1.Secret{foreign},
			wantID:   candidateID(ref, PurposeFetch, 1), wantExpiration: epoch.Add(24 * time.Hour), wantWrites: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, client := setup(t, epoch, tc.existing...)
			client.ClearActions()
			tok, err := m.Ensure(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if tok.ID != tc.wantID || !tok.Expiration.Equal(tc.wantExpiration) {
				t.Errorf("token %s expiring %v, want %s expiring %v", tok.ID, tok.Expiration, tc.wantID, tc.wantExpiration)
			}
			if tc.wantSecret != "" && tok.Secret != tc.wantSecret {
				t.Errorf("token secret changed to %q", tok.Secret)
			}
			if !tokenSecretRE.MatchString(tok.Secret) {
				t.Errorf("invalid token secret %q", tok.Secret)
			}
			if n := len(client.Actions()); n != tc.wantWrites {
				t.Errorf("%d API calls, want %d: %v", n, tc.wantWrites, client.Actions())
			}
			s, err := client.CoreV1().Secrets(Namespace).Get(context.Background(), tok.SecretName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			stored, ok := parse(s)
			if !ok || stored != tok || s.Type != corev1.SecretTypeBootstrapToken || string(s.Data[keyAuthExtraGroups]) != req.Groups {
				t.Errorf("stored token %+v (valid %v, type %s), want %+v", stored, ok, s.Type, tok)
			}
		})
	}
}

func TestEnsureAfterStaleCacheFindsItsToken(t *testing.T) {
	m, client := setup(t, epoch)
	first, err := m.Ensure(context.Background(), Request{Ref: ref, Purpose: PurposeKubelet, Groups: KubeletGroup})
	if err != nil {
		t.Fatal(err)
	}
	// The lister has not seen the token: Ensure must not make a second one.
	second, err := m.Ensure(context.Background(), Request{Ref: ref, Purpose: PurposeKubelet, Groups: KubeletGroup})
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Errorf("second Ensure returned %+v, want %+v", second, first)
	}
	list, _ := client.CoreV1().Secrets(Namespace).List(context.Background(), metav1.ListOptions{})
	if len(list.Items) != 1 {
		t.Errorf("%d token secrets, want 1", len(list.Items))
	}
}

func TestLookupAndDelete(t *testing.T) {
	other := machinecontroller.Ref{Namespace: "team-a", Name: "other"}
	otherTok := newSecret(other, PurposeFetch, "g", Token{ID: candidateID(other, PurposeFetch, 0), Secret: "fedcba9876543210", Expiration: epoch})
	m, client := setup(t, epoch, ours(PurposeFetch, 0, epoch), ours(PurposeKubelet, 0, epoch), otherTok)
	tok, ok := Lookup(m.Cache, ref, PurposeKubelet)
	if !ok || tok.ID != candidateID(ref, PurposeKubelet, 0) {
		t.Fatalf("Lookup = %+v, %v", tok, ok)
	}
	if _, ok := Lookup(m.Cache, machinecontroller.Ref{Namespace: "x", Name: "y"}, PurposeKubelet); ok {
		t.Errorf("Lookup found a token of an unknown MachineDeployment")
	}
	if err := m.Delete(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
	list, _ := client.CoreV1().Secrets(Namespace).List(context.Background(), metav1.ListOptions{})
	if len(list.Items) != 1 || list.Items[0].Name != otherTok.Name {
		t.Errorf("after Delete: %d secrets, want only %s", len(list.Items), otherTok.Name)
	}
}

func TestDeletePurpose(t *testing.T) {
	other := machinecontroller.Ref{Namespace: "team-a", Name: "other"}
	otherTok := newSecret(other, PurposeFetch, "g", Token{ID: candidateID(other, PurposeFetch, 0), Secret: "fedcba9876543210", Expiration: epoch})
	kubelet := ours(PurposeKubelet, 0, epoch)
	m, client := setup(t, epoch, ours(PurposeFetch, 1, epoch), kubelet, otherTok)
	if err := m.DeletePurpose(context.Background(), ref, PurposeFetch); err != nil {
		t.Fatal(err)
	}
	list, _ := client.CoreV1().Secrets(Namespace).List(context.Background(), metav1.ListOptions{})
	var left []string
	for _, s := range list.Items {
		left = append(left, s.Name)
	}
	if len(left) != 2 || !slices.Contains(left, kubelet.Name) || !slices.Contains(left, otherTok.Name) {
		t.Errorf("left %v, want only %s and %s", left, kubelet.Name, otherTok.Name)
	}
}

// A tenant can search for MD names whose derived token IDs are another MD's
// and take them first; the MD then gets a random ID, which nobody can aim at,
// found again by its labels, by Ensure (from the API) and Lookup (the cache).
func TestSquattedIDsFallBackToARandomID(t *testing.T) {
	squatter := machinecontroller.Ref{Namespace: "team-b", Name: "squatter"}
	var squatted []*corev1.Secret
	for i := range candidates {
		squatted = append(squatted, newSecret(squatter, PurposeKubelet, KubeletGroup,
			Token{ID: candidateID(ref, PurposeKubelet, i), Secret: "fedcba9876543210", Expiration: epoch.Add(time.Hour)}))
	}
	m, client := setup(t, epoch, squatted...)
	req := Request{Ref: ref, Purpose: PurposeKubelet, Groups: KubeletGroup}
	tok, err := m.Ensure(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for i := range candidates {
		if tok.ID == candidateID(ref, PurposeKubelet, i) {
			t.Fatalf("token %s took a squatted id", tok.ID)
		}
	}
	if _, ok := Lookup(m.Cache, ref, PurposeKubelet); ok {
		t.Fatal("the cache has not seen the token yet, but Lookup found one")
	}
	// The cache is behind: Ensure must find the token, not make a second one.
	again, err := m.Ensure(context.Background(), req)
	if err != nil || again != tok {
		t.Fatalf("second Ensure = %+v, %v; want %+v", again, err, tok)
	}
	list, _ := client.CoreV1().Secrets(Namespace).List(context.Background(), metav1.ListOptions{})
	if len(list.Items) != candidates+1 {
		t.Fatalf("%d token secrets, want %d", len(list.Items), candidates+1)
	}

	// Once the cache has it, Lookup finds it, and DeletePurpose removes only it.
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, Indexers())
	for i := range list.Items {
		if err := indexer.Add(&list.Items[i]); err != nil {
			t.Fatal(err)
		}
	}
	m.Cache = indexer
	if found, ok := Lookup(m.Cache, ref, PurposeKubelet); !ok || found != tok {
		t.Fatalf("Lookup = %+v, %v; want %+v", found, ok, tok)
	}
	if err := m.DeletePurpose(context.Background(), ref, PurposeKubelet); err != nil {
		t.Fatal(err)
	}
	list, _ = client.CoreV1().Secrets(Namespace).List(context.Background(), metav1.ListOptions{})
	for _, s := range list.Items {
		if s.Name == tok.SecretName() || len(list.Items) != candidates {
			t.Fatalf("after DeletePurpose: %d secrets, %s among them", len(list.Items), s.Name)
		}
	}
}

// With two tokens of one MD (a random one, then a derived ID freed again;
// the first derived ID is another MD's), Lookup picks the one Ensure keeps:
// the derived ID.
func TestLookupPicksTheTokenEnsureKeeps(t *testing.T) {
	other := machinecontroller.Ref{Namespace: "team-b", Name: "other"}
	taken := newSecret(other, PurposeKubelet, KubeletGroup, Token{ID: candidateID(ref, PurposeKubelet, 0), Secret: "fedcba9876543210", Expiration: epoch.Add(20 * time.Hour)})
	random := newSecret(ref, PurposeKubelet, KubeletGroup, Token{ID: "zzzzzz", Secret: "fedcba9876543210", Expiration: epoch.Add(20 * time.Hour)})
	derived := ours(PurposeKubelet, 1, epoch.Add(20*time.Hour))
	derived.CreationTimestamp = metav1.NewTime(epoch.Add(time.Hour)) // made after the random one
	m, _ := setup(t, epoch, taken, random, derived)
	got, ok := Lookup(m.Cache, ref, PurposeKubelet)
	kept, err := m.Ensure(context.Background(), Request{Ref: ref, Purpose: PurposeKubelet, Groups: KubeletGroup})
	if err != nil {
		t.Fatal(err)
	}
	if !ok || got != kept || got.ID != candidateID(ref, PurposeKubelet, 1) {
		t.Errorf("Lookup = %+v (%v), Ensure = %+v; want both the derived id %s", got, ok, kept, candidateID(ref, PurposeKubelet, 1))
	}
}
