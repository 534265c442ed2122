package tokens

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
)

// Only a change of a token's value changes payloads: extending a bootstrap
// token (its expiration) does not.
func TestValueChanged(t *testing.T) {
	bootstrap := &corev1.Secret{Data: map[string][]byte{keyTokenSecret: []byte("0123456789abcdef"), keyExpiration: []byte("a")}}
	extended := bootstrap.DeepCopy()
	extended.Data[keyExpiration] = []byte("b")
	rotated := extended.DeepCopy()
	rotated.Data[keyTokenSecret] = []byte("fedcba9876543210")
	fetch := &corev1.Secret{Data: map[string][]byte{keyFetchToken: []byte("a.b.c")}}
	replaced := fetch.DeepCopy()
	replaced.Data[keyFetchToken] = []byte("d.e.f")
	tests := []struct {
		name     string
		old, cur any
		want     bool
	}{
		{name: "bootstrap token extended", old: bootstrap, cur: extended},
		{name: "bootstrap token secret changed", old: extended, cur: rotated, want: true},
		{name: "fetch token replaced", old: fetch, cur: replaced, want: true},
		{name: "fetch token resynced", old: fetch, cur: fetch},
		{name: "not a Secret", old: "x", cur: fetch, want: true},
	}
	for _, tc := range tests {
		if got := ValueChanged(tc.old, tc.cur); got != tc.want {
			t.Errorf("%s: ValueChanged = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The fetch informer follows the MD's fetch token Secret in its namespace.
func TestFetchInformerFollowsTheFetchToken(t *testing.T) {
	client := machinecontrollertest.NewClientset()
	s := newTestInformer(client)
	stop := make(chan struct{})
	defer close(stop)
	s.Start(stop)
	ref := machinecontroller.Ref{Namespace: "team", Name: "workers"}
	secret := fetchTokenSecret(ref)
	secret.Data = map[string][]byte{keyFetchToken: []byte("a.b.c")}
	ctx := context.Background()
	expect := func(want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			tok, ok := LookupFetch(s.FetchLister(), ref)
			if ok && tok == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("LookupFetch = %q, %v; want %q", tok, ok, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if _, err := client.CoreV1().Secrets(FetchNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("a.b.c")
	secret.Data[keyFetchToken] = []byte("d.e.f")
	if _, err := client.CoreV1().Secrets(FetchNamespace).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("d.e.f")
}
