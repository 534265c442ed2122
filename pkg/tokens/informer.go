package tokens

import (
	corev1 "k8s.io/api/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Informer watches the tokens osm-apiserver keeps, and only those (by label):
// the kubelet bootstrap tokens in kube-system and the Secrets holding fetch
// tokens in FetchNamespace, of the worker cluster. Every replica runs it: the
// payloads it serves embed the tokens.
type Informer struct {
	bootstrap cache.SharedIndexInformer
	fetch     cache.SharedIndexInformer
}

// FromInformers reads the informers of the bootstrap tokens (indexed by
// Indexers) and of the fetch tokens (pkg/informers.NewTokens builds them).
func FromInformers(bootstrap, fetch cache.SharedIndexInformer) *Informer {
	return &Informer{bootstrap: bootstrap, fetch: fetch}
}

// HasSynced says whether both informers have listed once.
func (i *Informer) HasSynced() bool {
	return i.bootstrap.HasSynced() && i.fetch.HasSynced()
}

// Lister reads the bootstrap tokens in kube-system.
func (i *Informer) Lister() corev1listers.SecretLister {
	return corev1listers.NewSecretLister(i.bootstrap.GetIndexer())
}

// FetchLister reads the Secrets holding fetch tokens.
func (i *Informer) FetchLister() corev1listers.SecretLister {
	return corev1listers.NewSecretLister(i.fetch.GetIndexer())
}

// Index is the cache of the bootstrap tokens, indexed by their MD and
// purpose, for Lookup and Manager.
func (i *Informer) Index() cache.Indexer {
	return i.bootstrap.GetIndexer()
}

// Informer is the shared informer of the bootstrap tokens, for event handlers.
func (i *Informer) Informer() cache.SharedIndexInformer {
	return i.bootstrap
}

// FetchInformer is the shared informer of the fetch tokens, for event handlers.
func (i *Informer) FetchInformer() cache.SharedIndexInformer {
	return i.fetch
}

// ValueChanged reports whether an update of a token Secret from old to cur
// changes a token (the payloads embed it), not only its expiration.
func ValueChanged(old, cur any) bool {
	o, ok1 := old.(*corev1.Secret)
	n, ok2 := cur.(*corev1.Secret)
	return !ok1 || !ok2 || string(o.Data[keyTokenSecret]) != string(n.Data[keyTokenSecret]) ||
		string(o.Data[keyFetchToken]) != string(n.Data[keyFetchToken])
}

// ownerIndex indexes token Secrets by the MD they were written for and their
// purpose: an MD's token is found in one step, whatever its ID.
const ownerIndex = "osm-owner-purpose"

// Indexers are the indexes of the bootstrap tokens' informer.
func Indexers() cache.Indexers {
	return cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, ownerIndex: ownerIndexFunc}
}

func ownerKey(ref machinecontroller.Ref, purpose string) string {
	return ref.Hash() + "/" + purpose
}

func ownerIndexFunc(obj any) ([]string, error) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return nil, nil
	}
	ref, ok := machinecontroller.Owner(s)
	if !ok {
		return nil, nil
	}
	return []string{ownerKey(ref, s.Labels[machinecontroller.PurposeLabel])}, nil
}

// Start runs both informers until stop closes (pkg/informers.Set starts
// them in the server; tests start them here).
func (i *Informer) Start(stop <-chan struct{}) {
	go i.bootstrap.Run(stop)
	go i.fetch.Run(stop)
}
