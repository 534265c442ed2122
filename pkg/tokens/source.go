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

// Tokens returns md's kubelet bootstrap token and fetch token, "" for one
// the syncer has not created (MDs whose nodes join through a MachineJoin have
// no kubelet bootstrap token).
func (s *Source) Tokens(md *clusterv1alpha1.MachineDeployment) (kubelet, fetch string) {
	return s.TokensOf(machinecontroller.Ref{Namespace: md.Namespace, Name: md.Name})
}

// TokensOf is Tokens of the MD ref.
func (s *Source) TokensOf(ref machinecontroller.Ref) (kubelet, fetch string) {
	if k, ok := Lookup(s.bootstrap, ref, PurposeKubelet); ok {
		kubelet = k.Value()
	}
	fetch, _ = LookupFetch(s.fetch, ref)
	return kubelet, fetch
}
