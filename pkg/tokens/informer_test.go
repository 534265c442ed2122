package tokens

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

func TestOnValueChange(t *testing.T) {
	client := fake.NewClientset()
	s := NewInformer(client)
	got := make(chan string, 10)
	if err := s.OnValueChange(func(ref machinecontroller.Ref) { got <- ref.String() }); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	s.Start(stop)
	ref := machinecontroller.Ref{Namespace: "team", Name: "workers"}
	token := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef", Namespace: "kube-system",
			Labels: ref.Labels("fetch-token"), Annotations: ref.Annotations()},
		Data: map[string][]byte{"token-secret": []byte("0123456789abcdef"), "expiration": []byte("a")},
	}
	ctx := context.Background()
	if _, err := client.CoreV1().Secrets("kube-system").Create(ctx, token, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect := func(want string) {
		t.Helper()
		select {
		case key := <-got:
			if key != want {
				t.Fatalf("notified %q, want %q", key, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no notification, want %q", want)
		}
	}
	expect("team/workers")
	// An extension (expiration only) does not change payloads: no notification.
	token.Data["expiration"] = []byte("b")
	if _, err := client.CoreV1().Secrets("kube-system").Update(ctx, token, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	token.Data["token-secret"] = []byte("fedcba9876543210")
	if _, err := client.CoreV1().Secrets("kube-system").Update(ctx, token, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("team/workers")
	select {
	case key := <-got:
		t.Errorf("unexpected notification %q", key)
	default:
	}
}

// A fetch token replaced in its Secret changes payloads: the MD is notified.
func TestOnValueChangeOfFetchTokens(t *testing.T) {
	client := fake.NewClientset()
	s := NewInformer(client)
	got := make(chan string, 10)
	if err := s.OnValueChange(func(ref machinecontroller.Ref) { got <- ref.String() }); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	s.Start(stop)
	ref := machinecontroller.Ref{Namespace: "team", Name: "workers"}
	secret := fetchTokenSecret(ref)
	secret.Data = map[string][]byte{keyFetchToken: []byte("a.b.c")}
	ctx := context.Background()
	expect := func() {
		t.Helper()
		select {
		case key := <-got:
			if key != "team/workers" {
				t.Fatalf("notified %q", key)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no notification for the fetch token")
		}
	}
	if _, err := client.CoreV1().Secrets(FetchNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect()
	secret.Data[keyFetchToken] = []byte("d.e.f")
	if _, err := client.CoreV1().Secrets(FetchNamespace).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect()
	if tok, ok := LookupFetch(s.FetchLister(), ref); !ok || tok != "d.e.f" {
		t.Errorf("LookupFetch = %q, %v", tok, ok)
	}
}
