package tokens

import (
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Source reads each MachineDeployment's tokens from the informer for its
// renders, so that every replica, leader or not, serves the payloads the
// Secrets hold.
type Source struct {
	bootstrap cache.Indexer
	fetch     corev1listers.SecretLister
}

// NewSource returns a Source over i.
func NewSource(i *Informer) *Source {
	return &Source{bootstrap: i.Index(), fetch: i.FetchLister()}
}

// Tokens returns md's kubelet bootstrap token and fetch token; ok is false
// until the syncer has created both.
func (s *Source) Tokens(md *clusterv1alpha1.MachineDeployment) (kubelet, fetch string, ok bool) {
	return s.TokensOf(machinecontroller.Ref{Namespace: md.Namespace, Name: md.Name})
}

// TokensOf is Tokens of the MD ref.
func (s *Source) TokensOf(ref machinecontroller.Ref) (kubelet, fetch string, ok bool) {
	k, ok1 := Lookup(s.bootstrap, ref, PurposeKubelet)
	f, ok2 := LookupFetch(s.fetch, ref)
	if !ok1 || !ok2 {
		return "", "", false
	}
	return k.Value(), f, true
}
