package tokens

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"math/big"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Keys and values of a bootstrap token Secret, as kube-apiserver reads them.
const (
	Namespace           = metav1.NamespaceSystem
	secretNamePrefix    = "bootstrap-token-"
	keyTokenID          = "token-id"
	keyTokenSecret      = "token-secret"
	keyExpiration       = "expiration"
	keyDescription      = "description"
	keyAuthExtraGroups  = "auth-extra-groups"
	keyUsageAuthenticat = "usage-bootstrap-authentication"
)

// Purposes of the tokens kept per MachineDeployment.
const (
	// PurposeKubelet is the kubelet's TLS-bootstrap token.
	PurposeKubelet = "kubelet-bootstrap-token"
	// PurposeFetch labels the Secret holding the fetch token of the bootstrap
	// payload, allowed to read only the MachineDeployment's own provisioning
	// and kubelet-bootstrap Secrets (see FetchIssuer). Earlier versions made
	// it a bootstrap token in kube-system; the syncer deletes those.
	PurposeFetch = "fetch-token"
)

// KubeletGroup is the group machine-controller's clusters bind to the node
// bootstrapper role and CSR auto-approval.
const KubeletGroup = "system:bootstrappers:machine-controller:default-node-token"

const (
	alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	// candidates bounds how many derived token IDs are tried for one
	// MachineDeployment and purpose when an ID is already taken by a token
	// that is not ours, before random ones.
	candidates = 4
)

var tokenSecretRE = regexp.MustCompile(`^[a-z0-9]{16}$`)

// Token is a bootstrap token: the kubelet's.
type Token struct {
	ID         string
	Secret     string
	Expiration time.Time
}

// Value is the bearer token: "<id>.<secret>".
func (t Token) Value() string { return t.ID + "." + t.Secret }

// SecretName is the name of the Secret holding the token.
func (t Token) SecretName() string { return secretNamePrefix + t.ID }

// candidateID is the i-th token ID for ref and purpose. IDs are derived from the
// MachineDeployment rather than random so that a retried create after a crash or
// a stale cache finds the token it made instead of making a second one.
func candidateID(ref machinecontroller.Ref, purpose string, i int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%s/%d", purpose, ref, i))
	n := new(big.Int).SetBytes(sum[:])
	id := make([]byte, 6)
	base := big.NewInt(int64(len(alphabet)))
	mod := new(big.Int)
	for j := range id {
		n.DivMod(n, base, mod)
		id[j] = alphabet[mod.Int64()]
	}
	return string(id)
}

// randomSecret returns the secret half of a new token.
func randomSecret() (string, error) {
	return randomString(16)
}

// randomString returns n characters of the token alphabet.
func randomString(n int) (string, error) {
	b := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range b {
		r, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", fmt.Errorf("failed to generate a token: %w", err)
		}
		b[i] = alphabet[r.Int64()]
	}
	return string(b), nil
}

// newSecret returns the Secret holding tok for ref and purpose.
func newSecret(ref machinecontroller.Ref, purpose string, groups string, tok Token) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        tok.SecretName(),
			Namespace:   Namespace,
			Labels:      ref.Labels(purpose),
			Annotations: ref.Annotations(),
		},
		Type: corev1.SecretTypeBootstrapToken,
		Data: map[string][]byte{
			keyTokenID:          []byte(tok.ID),
			keyTokenSecret:      []byte(tok.Secret),
			keyExpiration:       []byte(tok.Expiration.UTC().Format(time.RFC3339)),
			keyDescription:      []byte(fmt.Sprintf("osm-apiserver %s for MachineDeployment %s", purpose, ref)),
			keyAuthExtraGroups:  []byte(groups),
			keyUsageAuthenticat: []byte("true"),
		},
	}
}

// parse reads the token held by s. ok is false if s does not hold a valid one.
func parse(s *corev1.Secret) (tok Token, ok bool) {
	tok.ID = string(s.Data[keyTokenID])
	tok.Secret = string(s.Data[keyTokenSecret])
	if s.Name != secretNamePrefix+tok.ID || !tokenSecretRE.MatchString(tok.Secret) {
		return Token{}, false
	}
	exp, err := time.Parse(time.RFC3339, string(s.Data[keyExpiration]))
	if err != nil {
		return Token{}, false
	}
	tok.Expiration = exp
	return tok, true
}

// ownedBy says whether s is the token of ref for purpose.
func ownedBy(s *corev1.Secret, ref machinecontroller.Ref, purpose string) bool {
	owner, ok := machinecontroller.Owner(s)
	return ok && owner == ref && s.Labels[machinecontroller.PurposeLabel] == purpose
}
