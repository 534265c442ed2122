package registry

import (
	"context"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/osm-apiserver/osm-apiserver/pkg/rendercache"
)

// Renderer returns the rendered output of a MachineDeployment, from the render
// cache when its inputs are unchanged. Failures specific to the MD (a missing or
// broken profile) are reported in Entry.Err, not as an error, so that one broken
// MD never fails a LIST.
type Renderer interface {
	Render(ctx context.Context, md *clusterv1alpha1.MachineDeployment) *rendercache.Entry
}
