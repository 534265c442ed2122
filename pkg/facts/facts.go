// Package facts owns the render inputs every MachineDeployment shares: the
// cluster nodes join (API server URL and CA, the CA bundles) and the node
// options, with the registry credentials. Some live in the cluster and change
// at run time — kube-public/cluster-info and the registry credentials Secret —
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

	hash string
}

// New returns the facts of cluster (its tokens dropped) and node.
func New(cluster render.ClusterInfo, node render.NodeOptions) (*Facts, error) {
	cluster.BootstrapToken, cluster.CloudInitGetterToken = "", ""
	f := &Facts{Cluster: cluster, Node: node}
	data, err := json.Marshal(struct {
		Cluster render.ClusterInfo
		Node    render.NodeOptions
	}{f.Cluster, f.Node})
	if err != nil {
		return nil, fmt.Errorf("failed to hash the cluster facts and node options: %w", err)
	}
	sum := sha256.Sum256(data)
	f.hash = hex.EncodeToString(sum[:12])
	return f, nil
}

// Hash identifies the facts; equal facts have equal hashes.
func (f *Facts) Hash() string {
	return f.hash
}
