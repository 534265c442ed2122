package informers

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// Payloads watches the Secrets the syncer writes in cloud-init-settings
// (payloads and kubelet bootstrap kubeconfigs), and only those (by label: not
// the fetch tokens, not the boot reports). The syncer compares them with what
// it would write; every replica reads their owner labels to tell which MD has
// the Secret names several MDs share (machines.Claims).
type Payloads struct {
	informer cache.SharedIndexInformer
}

// NewPayloads returns the informer of our Secrets in cloud-init-settings; w
// wraps its list-watch.
func NewPayloads(client kubernetes.Interface, w Wrap) *Payloads {
	lw := secretListWatch(client, machinecontroller.CloudInitSettingsNamespace, payloadSelector)
	return &Payloads{informer: newInformer(wrap(lw, w), &corev1.Secret{}, namespaceIndex, digestPayload)}
}

// payloadSelector selects our Secrets in cloud-init-settings but the fetch
// tokens (NewTokens') and the boot reports (NewBootReports', metadata only).
var payloadSelector = machinecontroller.ManagedSelector().String() + "," +
	machinecontroller.PurposeLabel + " notin (" + tokens.PurposeFetch + "," + bootreports.Purpose + ")"

// Start runs the informer until stop closes (Set.Start starts it in the
// server; tests start it here).
func (p *Payloads) Start(stop <-chan struct{}) {
	go p.informer.Run(stop)
}

// HasSynced says whether the informer has listed once.
func (p *Payloads) HasSynced() bool {
	return p.informer.HasSynced()
}

// Lister reads the Secrets; each data entry is only a digest (PayloadDigest).
func (p *Payloads) Lister() corev1listers.SecretLister {
	return corev1listers.NewSecretLister(p.informer.GetIndexer())
}

// Informer is the shared informer, for event handlers.
func (p *Payloads) Informer() cache.SharedIndexInformer {
	return p.informer
}

// digestKeySuffix marks, in the cache only, a data entry replaced by its digest.
const digestKeySuffix = ".sha256"

// PayloadDigest returns the digest the cache keeps of a cached payload
// Secret's data entry key, and whether it has one.
func PayloadDigest(s *corev1.Secret, key string) (string, bool) {
	d, ok := s.Data[key+digestKeySuffix]
	return string(d), ok
}

// DigestOf is the digest PayloadDigest returns for data.
func DigestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// digestPayload replaces the user-data of cached payload Secrets by its
// digest: the syncer only compares it, and 1,000 provisioning payloads would
// otherwise keep ~30 MB alive next to the render cache holding the same bytes.
func digestPayload(obj any) (any, error) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return obj, nil
	}
	data, ok := s.Data[machinecontroller.SecretDataKey]
	if !ok {
		return machinecontroller.StripManagedFields(obj)
	}
	out := *s
	out.ManagedFields = nil
	out.Data = maps.Clone(s.Data)
	delete(out.Data, machinecontroller.SecretDataKey)
	out.Data[machinecontroller.SecretDataKey+digestKeySuffix] = []byte(DigestOf(data))
	machinecontroller.InternMeta(&out)
	return &out, nil
}
