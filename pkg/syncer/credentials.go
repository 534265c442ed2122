package syncer

import (
	"errors"
	"fmt"

	corev1listers "k8s.io/client-go/listers/core/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/bootstraptoken"
	"github.com/osm-apiserver/osm-apiserver/pkg/syncer/mdref"
)

// ErrNoCredentials says the syncer has not created a MachineDeployment's tokens
// yet; a render without them would hand nodes a token that does not work.
var ErrNoCredentials = errors.New("tokens not created yet")

// Credentials are the per-MachineDeployment tokens rendered into payloads.
type Credentials struct {
	// BootstrapToken is the kubelet's TLS-bootstrap token, "<id>.<secret>".
	BootstrapToken string
	// CloudInitGetterToken is the fetch token of the bootstrap payload.
	CloudInitGetterToken string
	// Version changes whenever either token's Secret changes; render caches
	// put it in their key.
	Version string
}

// CredentialSource reads the tokens of MachineDeployments from the token
// informer. The API server plugs it into its render inputs.
type CredentialSource struct {
	lister corev1listers.SecretLister
}

// NewCredentialSource returns a CredentialSource over s.Tokens.
func NewCredentialSource(s *SecretInformers) *CredentialSource {
	return &CredentialSource{lister: s.TokenLister()}
}

// Credentials returns the tokens of MachineDeployment namespace/name, or an
// error wrapping ErrNoCredentials.
func (c *CredentialSource) Credentials(namespace, name string) (Credentials, error) {
	ref := mdref.Ref{Namespace: namespace, Name: name}
	kubelet, ok := bootstraptoken.Lookup(c.lister, ref, bootstraptoken.PurposeKubelet)
	if !ok {
		return Credentials{}, fmt.Errorf("machine deployment %s: kubelet bootstrap token: %w", ref, ErrNoCredentials)
	}
	fetch, ok := bootstraptoken.Lookup(c.lister, ref, bootstraptoken.PurposeFetch)
	if !ok {
		return Credentials{}, fmt.Errorf("machine deployment %s: fetch token: %w", ref, ErrNoCredentials)
	}
	return Credentials{
		BootstrapToken:       kubelet.Value(),
		CloudInitGetterToken: fetch.Value(),
		// The values, not the Secrets' resourceVersions: extending a token's
		// expiration must not invalidate renders.
		Version: kubelet.ID + "." + fetch.ID + "." + digest(kubelet.Secret+fetch.Secret),
	}, nil
}
