package syncer

import (
	"crypto/sha256"
	"encoding/hex"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// PayloadInformer watches the Secrets the syncer writes in
// cloud-init-settings (payloads and kubelet bootstrap kubeconfigs), and only
// those (by label; the fetch tokens there are the token informer's). Only the
// syncer reads them.
type PayloadInformer struct {
	factory  informers.SharedInformerFactory
	informer cache.SharedIndexInformer
}

// NewPayloadInformer returns the informer of our Secrets in cloud-init-settings
// of the cluster of client.
func NewPayloadInformer(client kubernetes.Interface) *PayloadInformer {
	selector := machinecontroller.ManagedSelector().String() + "," + machinecontroller.PurposeLabel + "!=" + tokens.PurposeFetch
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(machinecontroller.CloudInitSettingsNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	i := factory.Core().V1().Secrets().Informer()
	// Setting a transform on an informer that has not started cannot fail.
	_ = i.SetTransform(digestPayload)
	return &PayloadInformer{factory: factory, informer: i}
}

// Start runs the informer until stop closes.
func (p *PayloadInformer) Start(stop <-chan struct{}) {
	p.factory.Start(stop)
}

// HasSynced says whether the informer has listed once.
func (p *PayloadInformer) HasSynced() bool {
	return p.informer.HasSynced()
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
	return &out, nil
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
