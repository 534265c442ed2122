package inputs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
)

// Credentials are the secrets one MachineDeployment's payloads embed.
type Credentials struct {
	// BootstrapToken is the kubelet TLS-bootstrap token, ID.SECRET.
	BootstrapToken string
	// CloudInitGetterToken lets the bootstrap payload fetch its provisioning Secret.
	CloudInitGetterToken string
	// Version changes whenever a token changes. It goes into the render cache
	// key instead of the tokens themselves.
	Version string
}

// CredentialSource supplies the credentials of an MD. The flags give one set for
// every MD; the syncer plugs in per-MD tokens it creates and rotates.
type CredentialSource interface {
	Credentials(ctx context.Context, md *clusterv1alpha1.MachineDeployment) (Credentials, error)
}

// StaticCredentials gives every MD the same credentials.
type StaticCredentials struct {
	creds Credentials
}

var _ CredentialSource = &StaticCredentials{}

// NewStaticCredentials returns a source giving every MD these tokens.
func NewStaticCredentials(bootstrapToken, cloudInitGetterToken string) *StaticCredentials {
	return &StaticCredentials{creds: Credentials{
		BootstrapToken:       bootstrapToken,
		CloudInitGetterToken: cloudInitGetterToken,
		Version:              TokenVersion(bootstrapToken, cloudInitGetterToken),
	}}
}

// Credentials implements CredentialSource.
func (s *StaticCredentials) Credentials(context.Context, *clusterv1alpha1.MachineDeployment) (Credentials, error) {
	return s.creds, nil
}

// TokenVersion returns a version string for a set of tokens that reveals nothing
// about them.
func TokenVersion(tokens ...string) string {
	h := sha256.New()
	for _, t := range tokens {
		h.Write([]byte(t))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
