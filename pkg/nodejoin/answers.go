package nodejoin

import (
	"context"
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/osm-apiserver/osm-apiserver/pkg/lru"
)

// answersCached is how many machines' answers Answers keeps: a rollout's
// worth, each a few hundred bytes.
const answersCached = 4096

// Answers reads which boot a machine was answered to, for the checks of
// other requests of that machine (its boot reports). Every replica reads
// it, so it reads the join identity itself rather than the leader's caches;
// an answer, once recorded, changes only with the Machine (a new UID), so
// it is kept per Machine UID and read once.
type Answers struct {
	client kubernetes.Interface
	cache  *lru.Cache[types.UID, Record]
}

// NewAnswers returns the reader of the join identities through client.
func NewAnswers(client kubernetes.Interface) *Answers {
	return &Answers{client: client, cache: lru.New[types.UID, Record](answersCached)}
}

// Of returns the record of m's answer; ok is false when m was not answered
// (or its identity is of an earlier Machine of the same name).
func (a *Answers) Of(ctx context.Context, m *clusterv1alpha1.Machine) (rec Record, ok bool, err error) {
	if rec, ok := a.cache.Get(m.UID); ok {
		return rec, true, nil
	}
	key := MachineKey{Namespace: m.Namespace, Name: m.Name}
	sa, err := a.client.CoreV1().ServiceAccounts(Namespace).Get(ctx, AccountName(key), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, fmt.Errorf("failed to read the join identity of machine %s/%s: %w", m.Namespace, m.Name, err)
	}
	rec, ok = ParseRecord(sa)
	if !ok || rec.Machine != key || rec.MachineUID != m.UID {
		return Record{}, false, nil
	}
	a.cache.Add(m.UID, rec)
	return rec, true, nil
}
