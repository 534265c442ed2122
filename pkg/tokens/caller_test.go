package tokens

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Only the fetch ServiceAccount of an MD whose fetch token the syncer keeps is
// that MD's caller; every other identity, of its namespace too, is nobody's.
func TestCallerMachineDeployment(t *testing.T) {
	ref := machinecontroller.Ref{Namespace: "team", Name: "workers"}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := indexer.Add(fetchTokenSecret(ref)); err != nil {
		t.Fatal(err)
	}
	// A Secret of the right name without our labels: not a fetch token.
	gone := machinecontroller.Ref{Namespace: "team", Name: "gone"}
	forged := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: FetchNamespace, Name: FetchTokenSecretName(gone)}}
	if err := indexer.Add(forged); err != nil {
		t.Fatal(err)
	}
	s := &Source{fetch: corev1listers.NewSecretLister(indexer)}
	sa := func(ns, name string) user.Info {
		return &user.DefaultInfo{Name: "system:serviceaccount:" + ns + ":" + name}
	}
	for _, tc := range []struct {
		name string
		user user.Info
		ok   bool
	}{
		{"the MD's fetch service account", sa(FetchNamespace, FetchAccessName(ref)), true},
		{"another service account of the namespace", sa(FetchNamespace, "default"), false},
		{"a fetch service account without its token secret", sa(FetchNamespace, FetchAccessName(machinecontroller.Ref{Namespace: "team", Name: "other"})), false},
		{"a service account whose secret is not ours", sa(FetchNamespace, FetchAccessName(gone)), false},
		{"the same name in another namespace", sa("team", FetchAccessName(ref)), false},
		{"a user", &user.DefaultInfo{Name: "osm-fetch-" + ref.Hash()}, false},
		{"nobody", nil, false},
	} {
		got, ok := s.CallerMachineDeployment(tc.user)
		if ok != tc.ok || ok && got != ref {
			t.Errorf("%s: %v, %v; want ok %v", tc.name, got, ok, tc.ok)
		}
	}
}
