package syncer

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/bootstraptoken"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/syncer/mdref"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SecretInformers watch the Secrets osm-apiserver writes, and only those (by
// label): tokens in kube-system, payloads and kubeconfigs in cloud-init-settings.
// Every replica runs them, leader or not: the API reads tokens through them.
type SecretInformers struct {
	factories []informers.SharedInformerFactory
	// Tokens holds the bootstrap tokens in kube-system.
	Tokens cache.SharedIndexInformer
	// Payloads holds the Secrets in cloud-init-settings.
	Payloads cache.SharedIndexInformer
}

// NewSecretInformers returns the informers of our Secrets in the cluster of client.
func NewSecretInformers(client kubernetes.Interface, resync time.Duration) *SecretInformers {
	selector := func(o *metav1.ListOptions) { o.LabelSelector = mdref.ManagedSelector().String() }
	tokens := informers.NewSharedInformerFactoryWithOptions(client, resync,
		informers.WithNamespace(bootstraptoken.Namespace), informers.WithTweakListOptions(selector))
	payloads := informers.NewSharedInformerFactoryWithOptions(client, resync,
		informers.WithNamespace(render.CloudInitSettingsNamespace), informers.WithTweakListOptions(selector))
	s := &SecretInformers{
		factories: []informers.SharedInformerFactory{tokens, payloads},
		Tokens:    tokens.Core().V1().Secrets().Informer(),
		Payloads:  payloads.Core().V1().Secrets().Informer(),
	}
	// Setting a transform on a new informer cannot fail.
	_ = s.Tokens.SetTransform(stripManagedFields)
	_ = s.Payloads.SetTransform(digestPayload)
	return s
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
	data, ok := s.Data[render.SecretDataKey]
	if !ok {
		return stripManagedFields(obj)
	}
	out := *s
	out.ManagedFields = nil
	out.Data = make(map[string][]byte, len(s.Data))
	for k, v := range s.Data {
		out.Data[k] = v
	}
	delete(out.Data, render.SecretDataKey)
	out.Data[render.SecretDataKey+digestKeySuffix] = []byte(sha256Hex(data))
	return &out, nil
}

// stripManagedFields drops what the syncer never reads and is often as big
// as the Secret itself.
func stripManagedFields(obj any) (any, error) {
	if s, ok := obj.(*corev1.Secret); ok {
		s.ManagedFields = nil
	}
	return obj, nil
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Start starts the informers; they stop when stop closes.
func (s *SecretInformers) Start(stop <-chan struct{}) {
	for _, f := range s.factories {
		f.Start(stop)
	}
}

// HasSynced says whether both informers have listed once.
func (s *SecretInformers) HasSynced() bool {
	return s.Tokens.HasSynced() && s.Payloads.HasSynced()
}

// TokenLister reads the tokens.
func (s *SecretInformers) TokenLister() corev1listers.SecretLister {
	return corev1listers.NewSecretLister(s.Tokens.GetIndexer())
}

// PayloadLister reads the Secrets in cloud-init-settings.
func (s *SecretInformers) PayloadLister() corev1listers.SecretLister {
	return corev1listers.NewSecretLister(s.Payloads.GetIndexer())
}

// OnTokenChange calls f with the MachineDeployment whose tokens were created,
// changed or deleted, on every replica: the API publishes a change of that
// MD's payloads to watchers, since its tokens are rendered into them.
func (s *SecretInformers) OnTokenChange(f func(namespace, name string)) error {
	call := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if sec, ok := obj.(*corev1.Secret); ok {
			if ref, ok := mdref.Owner(sec); ok {
				f(ref.Namespace, ref.Name)
			}
		}
	}
	_, err := s.Tokens.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: call,
		UpdateFunc: func(old, cur any) {
			// Extending a token changes only its expiration, not the payloads.
			o, ok1 := old.(*corev1.Secret)
			n, ok2 := cur.(*corev1.Secret)
			if !ok1 || !ok2 || string(o.Data["token-secret"]) != string(n.Data["token-secret"]) {
				call(cur)
			}
		},
		DeleteFunc: call,
	})
	return err
}
