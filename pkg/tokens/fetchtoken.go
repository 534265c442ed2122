package tokens

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// The fetch token is a token of the MachineDeployment's own ServiceAccount from
// the TokenRequest API, bound to the Secret that holds it: deleting that Secret
// or the ServiceAccount revokes it at once, and it expires on its own.

// FetchNamespace holds the fetch tokens' ServiceAccounts and the Secrets
// their tokens are bound to (a bound object must be in the ServiceAccount's
// namespace). It is not cloud-init-settings: whoever may read the Secrets
// there — upstream OSM's getter token, which every node upstream provisioned
// holds, reads all of them until migrate deletes it — must not read the
// fetch tokens, and RBAC cannot deny one Secret of a namespace. The fetch
// Roles and RoleBindings of the compatibility mode stay in
// cloud-init-settings, beside the Secrets they grant.
const FetchNamespace = "osm-fetch"

// SecretTypeFetchToken is the type of the Secret holding a fetch token: not
// kubernetes.io/service-account-token, which kube-controller-manager would fill.
const SecretTypeFetchToken corev1.SecretType = "osm.k8c.io/fetch-token"

// keyFetchToken holds the token in its Secret.
const keyFetchToken = "token"

// minTokenTTL is the shortest lifetime kube-apiserver issues a token for.
const minTokenTTL = 10 * time.Minute

// FetchTokenSecretName is the name of the Secret holding ref's fetch token.
func FetchTokenSecretName(ref machinecontroller.Ref) string {
	return FetchAccessName(ref) + fetchTokenSecretSuffix
}

const fetchTokenSecretSuffix = "-token"

// FetchToken is a ServiceAccount token and what it says about itself.
type FetchToken struct {
	Value      string
	IssuedAt   time.Time
	Expiration time.Time
	claims     claims
}

// claims are the parts of a ServiceAccount token's claims we check.
type claims struct {
	IssuedAt   int64 `json:"iat"`
	Expiration int64 `json:"exp"`
	Kubernetes struct {
		Namespace      string    `json:"namespace"`
		ServiceAccount boundRef  `json:"serviceaccount"`
		Secret         *boundRef `json:"secret"`
	} `json:"kubernetes.io"`
}

type boundRef struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// ParseFetchToken reads the claims of a ServiceAccount token (a JWT) without
// verifying its signature: kube-apiserver does that; the syncer only decides
// whether a token it stored is still the one to hand out.
func ParseFetchToken(value string) (FetchToken, error) {
	parts := strings.Split(value, ".")
	if len(parts) != 3 {
		return FetchToken{}, errors.New("not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return FetchToken{}, fmt.Errorf("invalid JWT payload: %w", err)
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return FetchToken{}, fmt.Errorf("invalid JWT claims: %w", err)
	}
	if c.IssuedAt == 0 || c.Expiration <= c.IssuedAt {
		return FetchToken{}, errors.New("JWT without a valid iat and exp")
	}
	return FetchToken{Value: value, IssuedAt: time.Unix(c.IssuedAt, 0), Expiration: time.Unix(c.Expiration, 0), claims: c}, nil
}

// boundTo says whether t is a token of sa bound to secret.
func (t FetchToken) boundTo(sa *corev1.ServiceAccount, secret *corev1.Secret) bool {
	k := t.claims.Kubernetes
	return k.Namespace == sa.Namespace && k.ServiceAccount == boundRef{Name: sa.Name, UID: string(sa.UID)} &&
		k.Secret != nil && *k.Secret == boundRef{Name: secret.Name, UID: string(secret.UID)}
}

// RenewAt is when t is replaced: once the share renewBefore/ttl of its
// lifetime is left. A token kube-apiserver issued for less than ttl (its
// --service-account-max-token-expiration) is renewed as early in its life.
func (t FetchToken) RenewAt(ttl, renewBefore time.Duration) time.Time {
	life := t.Expiration.Sub(t.IssuedAt)
	left := time.Duration(float64(life) * float64(renewBefore) / float64(ttl))
	return t.Expiration.Add(-left)
}

// LookupFetch returns ref's fetch token from the cache of the Secrets holding
// them; ok is false if the syncer has not issued it yet.
func LookupFetch(lister corev1listers.SecretLister, ref machinecontroller.Ref) (token string, ok bool) {
	s, err := lister.Secrets(FetchNamespace).Get(FetchTokenSecretName(ref))
	if err != nil || !ownedBy(s, ref, PurposeFetch) || s.Type != SecretTypeFetchToken || len(s.Data[keyFetchToken]) == 0 {
		return "", false
	}
	// The token is the cached Secret's bytes, not a copy of them: a table
	// of OSCs resolves every MD, which would copy every token (1-2 KiB) for
	// every LIST, and the resolver keeps each MD's token. Objects of an
	// informer are never modified (whoever writes one copies it first), so
	// the bytes never change under the string.
	data := s.Data[keyFetchToken]
	return unsafe.String(unsafe.SliceData(data), len(data)), true
}

// fetchTokenSecret is the Secret holding ref's fetch token, without one.
func fetchTokenSecret(ref machinecontroller.Ref) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        FetchTokenSecretName(ref),
			Namespace:   FetchNamespace,
			Labels:      ref.Labels(PurposeFetch),
			Annotations: ref.Annotations(),
		},
		Type: SecretTypeFetchToken,
	}
}
