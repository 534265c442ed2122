package syncer

import (
	"crypto/sha256"
	"encoding/hex"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// PayloadInformer watches the Secrets the syncer writes in
// cloud-init-settings (payloads and kubelet bootstrap kubeconfigs), and only
// those (by label: not the fetch tokens, not the boot reports). The syncer compares them with what it would write; every
// replica reads their owner labels to tell which MD has the Secret names
// several MDs share (machines.Claims).
type PayloadInformer struct {
	informer cache.SharedIndexInformer
}

// NewPayloadInformer returns the informer of our Secrets in cloud-init-settings
// of the cluster of client; wrap, if given, wraps its list-watch (the API
// makes it a stream of its change feed, for watch positions).
func NewPayloadInformer(client kubernetes.Interface, wrap ...func(cache.ListerWatcher) cache.ListerWatcher) *PayloadInformer {
	lw := machinecontroller.NewSecretListWatch(client, machinecontroller.CloudInitSettingsNamespace, payloadSelector)
	for _, w := range wrap {
		lw = w(lw)
	}
	i := cache.NewSharedIndexInformer(lw, &corev1.Secret{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	// Setting a transform on an informer that has not started cannot fail.
	_ = i.SetTransform(digestPayload)
	return &PayloadInformer{informer: i}
}

// payloadSelector selects our Secrets in cloud-init-settings but the fetch
// tokens (the token informer's) and the boot reports (bootreports.Informer's,
// which keeps only their metadata).
var payloadSelector = machinecontroller.ManagedSelector().String() + "," +
	machinecontroller.PurposeLabel + " notin (" + tokens.PurposeFetch + "," + bootreports.Purpose + ")"

// Start runs the informer until stop closes.
func (p *PayloadInformer) Start(stop <-chan struct{}) {
	go p.informer.Run(stop)
}

// HasSynced says whether the informer has listed once.
func (p *PayloadInformer) HasSynced() bool {
	return p.informer.HasSynced()
}

// Lister reads the Secrets; their user-data is only a digest (see digestPayload).
func (p *PayloadInformer) Lister() corev1listers.SecretLister {
	return corev1listers.NewSecretLister(p.informer.GetIndexer())
}

// Informer is the shared informer, for event handlers.
func (p *PayloadInformer) Informer() cache.SharedIndexInformer {
	return p.informer
}

// digestKeySuffix marks, in the cache only, a data entry replaced by its digest.
const digestKeySuffix = ".sha256"

// digestPayload replaces the user-data of cached payload Secrets by its sha256:
// the syncer only compares it, and 1,000 provisioning payloads would otherwise
// keep ~30 MB alive next to the render cache holding the same bytes.
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
	out.Data = make(map[string][]byte, len(s.Data))
	for k, v := range s.Data {
		out.Data[k] = v
	}
	delete(out.Data, machinecontroller.SecretDataKey)
	out.Data[machinecontroller.SecretDataKey+digestKeySuffix] = []byte(sha256Hex(data))
	machinecontroller.InternMeta(&out)
	return &out, nil
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
