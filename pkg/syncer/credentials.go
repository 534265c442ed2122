package syncer

import (
	"context"
	"errors"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1listers "k8s.io/client-go/listers/core/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/bootstraptoken"
	"github.com/osm-apiserver/osm-apiserver/pkg/inputs"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/rendercache"
	"github.com/osm-apiserver/osm-apiserver/pkg/syncer/mdref"
)

// ErrNoCredentials says the syncer has not created a MachineDeployment's tokens
// yet; a render without them would hand nodes a token that does not work. The
// API shows it as Pending: the syncer creates them within moments.
var ErrNoCredentials = &rendercache.PendingError{Reason: "waiting for the syncer to create tokens"}

// CredentialSource reads the per-MachineDeployment tokens the syncer keeps from
// the token informer. The API server plugs it into its render inputs, so every
// replica, leader or not, serves the same payloads as the Secrets hold.
type CredentialSource struct {
	lister corev1listers.SecretLister
}

var _ inputs.CredentialSource = &CredentialSource{}

// NewCredentialSource returns a CredentialSource over s.Tokens.
func NewCredentialSource(s *SecretInformers) *CredentialSource {
	return &CredentialSource{lister: s.TokenLister()}
}

// Credentials implements inputs.CredentialSource. The error is
// ErrNoCredentials when the tokens do not exist yet.
func (c *CredentialSource) Credentials(_ context.Context, md *clusterv1alpha1.MachineDeployment) (inputs.Credentials, error) {
	ref := mdref.Ref{Namespace: md.Namespace, Name: md.Name}
	kubelet, ok := bootstraptoken.Lookup(c.lister, ref, bootstraptoken.PurposeKubelet)
	if !ok {
		return inputs.Credentials{}, ErrNoCredentials
	}
	fetch, ok := bootstraptoken.Lookup(c.lister, ref, bootstraptoken.PurposeFetch)
	if !ok {
		return inputs.Credentials{}, ErrNoCredentials
	}
	return inputs.Credentials{
		BootstrapToken:       kubelet.Value(),
		CloudInitGetterToken: fetch.Value(),
		// From the values, not the Secrets' resourceVersions: extending a
		// token's expiration must not invalidate cached renders.
		Version: inputs.TokenVersion(kubelet.Value(), fetch.Value()),
	}, nil
}

// StaticCluster is a ClusterSource for cluster facts fixed at start (flags).
type StaticCluster render.ClusterInfo

// Cluster implements ClusterSource.
func (s StaticCluster) Cluster() (bootstraptoken.Cluster, error) {
	if s.ServerURL == "" || s.CACert == "" {
		return bootstraptoken.Cluster{}, errors.New("cluster server URL and CA certificate are not configured")
	}
	return bootstraptoken.Cluster{ServerURL: s.ServerURL, CACert: []byte(s.CACert)}, nil
}

// ClusterFunc is a ClusterSource for cluster facts that change at run time:
// it returns the facts renders use now.
type ClusterFunc func() render.ClusterInfo

// Cluster implements ClusterSource.
func (f ClusterFunc) Cluster() (bootstraptoken.Cluster, error) {
	return StaticCluster(f()).Cluster()
}
