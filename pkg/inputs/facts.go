package inputs

import (
	"fmt"

	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// Facts are the render inputs every MD shares: the cluster nodes join and the
// node options. They change at run time when kube-public/cluster-info or the
// registry credentials Secret change.
type Facts struct {
	Cluster render.ClusterInfo
	Node    render.NodeOptions
}

// facts are Facts with their hash, which is part of every render's cache key:
// new facts can never be served a render of the old ones.
type facts struct {
	Facts
	hash string
}

// SetFacts swaps in new facts for the renders that follow; renders in flight
// finish with the old ones under the old key. It says whether the facts
// changed. The cluster's tokens are ignored in favour of Credentials.
func (r *Resolver) SetFacts(f Facts) (bool, error) {
	f.Cluster.BootstrapToken, f.Cluster.CloudInitGetterToken = "", ""
	hash, err := hashJSON(f)
	if err != nil {
		return false, fmt.Errorf("failed to hash the render options: %w", err)
	}
	old := r.facts.Load()
	if old != nil && old.hash == hash {
		return false, nil
	}
	// Callers serialize SetFacts (see Refresher), so no compare-and-swap.
	r.facts.Store(&facts{Facts: f, hash: hash})
	return true, nil
}

// Facts returns the facts renders use now.
func (r *Resolver) Facts() Facts {
	return r.facts.Load().Facts
}
