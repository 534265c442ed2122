package resolve

import (
	"crypto/sha256"
	"encoding/hex"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
)

// TokenSource supplies the tokens one MachineDeployment's payloads embed: the
// kubelet's bootstrap token and the fetch token, "" for one that does not
// exist (yet: the syncer creates them; the render is then pending). An MD
// whose nodes join through a MachineJoin needs no kubelet token.
// *tokens.Source implements it.
type TokenSource interface {
	Tokens(md *clusterv1alpha1.MachineDeployment) (kubelet, fetch string)
}

// StaticTokens gives every MachineDeployment the same tokens.
type StaticTokens struct {
	Kubelet, Fetch string
}

// Tokens implements TokenSource.
func (s StaticTokens) Tokens(*clusterv1alpha1.MachineDeployment) (kubelet, fetch string) {
	return s.Kubelet, s.Fetch
}

// tokenVersion identifies a set of tokens in the render cache key without
// revealing them. Extending a token's expiration does not change it, so it
// does not invalidate cached renders.
func tokenVersion(kubelet, fetch string) string {
	return hashTokens(kubelet, fetch)
}

func hashTokens(tokens ...string) string {
	h := sha256.New()
	for _, t := range tokens {
		h.Write([]byte(t))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
