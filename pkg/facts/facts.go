// Package facts owns the render inputs every MachineDeployment shares: the
// cluster nodes join (API server URL and CA, the CA bundles) and the node
// options, with the registry credentials. Some live in the cluster and change
// at run time — kube-public/cluster-info, kube-apiserver's EndpointSlice and
// the registry credentials Secret —
// so a Source watches them: it starts, waits for its informers to sync,
// computes the facts, keeps the last good value when a new one is bad, and
// tells its subscribers when the facts change. There is no other path: the
// facts at start are the first value of the same computation.
package facts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// Facts are one consistent set of shared render inputs, with their hash,
// which is part of every render's cache key: new facts can never be served a
// render of old ones. Facts are shared: treat them as read-only.
type Facts struct {
	// Cluster is the cluster nodes join; it holds no tokens (they are per MD).
	Cluster render.ClusterInfo
	// Node are the node options, registry credentials included.
	Node render.NodeOptions
	// ServerSource says where Cluster.ServerURL came from; empty for facts
	// built by New.
	ServerSource osm.APIServerSource

	hash, version string
	// credentialsVersion is the resourceVersion of the registry credentials' Secret.
	credentialsVersion string
}

// New returns the facts of cluster (its tokens dropped) and node.
func New(cluster render.ClusterInfo, node render.NodeOptions) (*Facts, error) {
	return newFacts(cluster, node, "")
}

// newFacts returns the facts of cluster, node and the source of the server
// URL (part of the OSCs' status, so of the hash and version too).
func newFacts(cluster render.ClusterInfo, node render.NodeOptions, source osm.APIServerSource) (*Facts, error) {
	cluster.BootstrapToken, cluster.CloudInitGetterToken = "", ""
	f := &Facts{Cluster: cluster, Node: node, ServerSource: source}
	data, err := json.Marshal(struct {
		Cluster render.ClusterInfo
		Node    render.NodeOptions
		Source  osm.APIServerSource `json:",omitempty"`
	}{f.Cluster, f.Node, source})
	if err != nil {
		return nil, fmt.Errorf("failed to hash the cluster facts and node options: %w", err)
	}
	sum := sha256.Sum256(data)
	f.hash = hex.EncodeToString(sum[:12])
	public := node
	public.RegistryCredentials = nil
	public.HTTPProxy = withoutUserInfo(node.HTTPProxy)
	if data, err = json.Marshal(struct {
		Cluster render.ClusterInfo
		Node    render.NodeOptions
		Source  osm.APIServerSource `json:",omitempty"`
	}{f.Cluster, public, source}); err != nil {
		return nil, fmt.Errorf("failed to hash the cluster facts and node options: %w", err)
	}
	sum = sha256.Sum256(data)
	f.version = hex.EncodeToString(sum[:6])
	return f, nil
}

// withCredentialsVersion adds to f's version the resourceVersion of the
// Secret its registry credentials came from.
func (f *Facts) withCredentialsVersion(resourceVersion string) {
	sum := sha256.Sum256([]byte(f.version + "/" + resourceVersion))
	f.version, f.credentialsVersion = hex.EncodeToString(sum[:6]), resourceVersion
}

// withoutUserInfo returns a proxy URL without its credentials.
func withoutUserInfo(proxy string) string {
	if u, err := url.Parse(proxy); err == nil && u.User != nil {
		u.User = nil
		return u.String()
	}
	return proxy
}

// APIServer is the API server address nodes are given, for the OSCs' status.
func (f *Facts) APIServer() *osm.APIServerStatus {
	return &osm.APIServerStatus{URL: f.Cluster.ServerURL, Source: f.ServerSource}
}

// Hash identifies the facts; equal facts have equal hashes.
func (f *Facts) Hash() string {
	return f.hash
}

// Version identifies the facts without revealing a secret: it is part of
// the API's resourceVersions, which every reader of an OperatingSystemConfig
// sees, and a hash of a credential would let one test guesses of it. It
// hashes the facts without credentials (registry logins, the proxy's user
// information) and the resourceVersion of the Secret the registry logins
// came from: equal on every replica with the same flags and cluster, and
// changed by every change in the cluster. A proxy password changed by flags
// alone does not change it; that takes a restart of each replica, which
// starts its watch history again.
func (f *Facts) Version() string {
	return f.version
}
