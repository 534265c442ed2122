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
			decision, _, err := r.cfg.Authorizer.Authorize(ctx, authorizer.AttributesRecord{
				User:            u,
				Verb:            "get",
				Namespace:       md.Namespace,
				APIGroup:        osm.GroupName,
				APIVersion:      "v1alpha1",
				Resource:        registry.OperatingSystemConfigs,
				ResourceRequest: true,
			})
			if err != nil && decision != authorizer.DecisionAllow {
				// The authorizer could not answer: refuse rather than guess.
				return nil, apierrors.NewInternalError(fmt.Errorf("failed to authorize reading operatingsystemconfigs in %s: %w", md.Namespace, err))
			}
			ok = decision == authorizer.DecisionAllow
			allowed[md.Namespace] = ok
		}
		if ok {
			out = append(out, md)
		}
	}
	return out, nil
}
