package profilereview

import (
	"context"
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

// readable returns the MDs whose OperatingSystemConfig the caller may read:
// a review shows what an OSC shows, so it may show it only to those who may
// read the OSC. One SubjectAccessReview per namespace (the delegating
// authorizer caches its answers); an MD of a namespace where the caller may
// not get OSCs is left out, and nothing says it was there.
func (r *REST) readable(ctx context.Context, u user.Info, mds []*clusterv1alpha1.MachineDeployment) ([]*clusterv1alpha1.MachineDeployment, error) {
	allowed := map[string]bool{}
	out := mds[:0:0]
	for _, md := range mds {
		ok, seen := allowed[md.Namespace]
		if !seen {
			var err error
			if ok, err = r.may(ctx, u, md.Namespace, registry.OperatingSystemConfigs); err != nil {
				return nil, err
			}
			allowed[md.Namespace] = ok
		}
		if ok {
			out = append(out, md)
		}
	}
	return out, nil
}

// audiences says, for each namespace of mds, what the caller may read of
// its MDs: their payloads (get provisioningpayloads there), or their view
// only. This is the one decision of who gets a review's answer from the
// real values; what each audience is shown is review.FromRendered's.
func (r *REST) audiences(ctx context.Context, u user.Info, mds []*clusterv1alpha1.MachineDeployment) (map[string]resolve.Audience, error) {
	out := map[string]resolve.Audience{}
	for _, md := range mds {
		if _, seen := out[md.Namespace]; seen {
			continue
		}
		ok, err := r.may(ctx, u, md.Namespace, registry.ProvisioningPayloads)
		if err != nil {
			return nil, err
		}
		out[md.Namespace] = resolve.ViewOnly
		if ok {
			out[md.Namespace] = resolve.Payloads
		}
	}
	return out, nil
}

// may says whether u may get resource of osm.k8c.io in namespace, through
// the server's authorizer (a SubjectAccessReview, cached by it). An
// authorizer that cannot answer refuses the review rather than guess.
func (r *REST) may(ctx context.Context, u user.Info, namespace, resource string) (bool, error) {
	decision, _, err := r.cfg.Authorizer.Authorize(ctx, authorizer.AttributesRecord{
		User:            u,
		Verb:            "get",
		Namespace:       namespace,
		APIGroup:        osm.GroupName,
		APIVersion:      "v1alpha1",
		Resource:        resource,
		ResourceRequest: true,
	})
	if err != nil && decision != authorizer.DecisionAllow {
		return false, apierrors.NewInternalError(fmt.Errorf("failed to authorize reading %s in %s: %w", resource, namespace, err))
	}
	return decision == authorizer.DecisionAllow, nil
}
