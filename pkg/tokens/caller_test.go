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

func TestCallerMachineDeployment(t *testing.T) {
	pool := machinecontroller.Ref{Namespace: "team", Name: "pool"}
	other := machinecontroller.Ref{Namespace: "team", Name: "other"}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, s := range []*corev1.Secret{
		fetchTokenSecret(pool),
		// A Secret of the right name whose labels name another MD.
		{ObjectMeta: metav1.ObjectMeta{Namespace: FetchNamespace, Name: FetchTokenSecretName(other),
			Labels: pool.Labels(PurposeFetch), Annotations: pool.Annotations()}},
	} {
		if err := indexer.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	lister := corev1listers.NewSecretLister(indexer)
	sa := func(namespace, name string) user.Info {
		return &user.DefaultInfo{Name: "system:serviceaccount:" + namespace + ":" + name}
	}
	tests := []struct {
		name string
		user user.Info
		want bool
	}{
		{"the MD's fetch ServiceAccount", sa(FetchNamespace, FetchAccessName(pool)), true},
		{"a token Secret naming another MD", sa(FetchNamespace, FetchAccessName(other)), false},
		{"an MD without a token", sa(FetchNamespace, FetchAccessName(machinecontroller.Ref{Namespace: "team", Name: "new"})), false},
		{"the same name in another namespace", sa("team", FetchAccessName(pool)), false},
		{"another ServiceAccount of the namespace", sa(FetchNamespace, "default"), false},
		{"a user", &user.DefaultInfo{Name: "alice"}, false},
		{"nobody", nil, false},
	}
	for _, tc := range tests {
		ref, ok := CallerMachineDeployment(tc.user, lister)
		if ok != tc.want || ok && ref != pool {
			t.Errorf("%s: %v, %v; want %v", tc.name, ref, ok, tc.want)
		}
	}
}
