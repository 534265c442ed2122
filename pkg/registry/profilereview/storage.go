// Package profilereview serves ProfileReviews: create-only, like
// SubjectAccessReviews. A review holds a candidate profile or overlay; the
// answer renders every MachineDeployment the candidate reaches, and the
// caller may read, as it is and with the candidate, and compares the two.
// Nothing is stored or cached.
package profilereview

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	pkgruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/overlays"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
	"github.com/osm-apiserver/osm-apiserver/pkg/review"
)

// Previewer renders MachineDeployments as they are and with a candidate.
// *resolve.Resolver implements it.
type Previewer interface {
	resolve.Interface
	Preview(ctx context.Context, md *clusterv1alpha1.MachineDeployment, c *resolve.Candidate, a resolve.Audience) *resolve.Rendered
}

// REST is the storage of profilereviews.
type REST struct {
	cfg Config
}

// Config is what the storage reads from.
type Config struct {
	// ProfileNamespace holds the profiles of candidates and MDs that name
	// no namespace (--namespace).
	ProfileNamespace   string
	MachineDeployments machines.Lister
	Resolver           Previewer
	// Overlays selects MDs for overlays; its lister finds the overlay a
	// candidate replaces.
	Overlays *overlays.Selector
	// Authorizer says whether the caller may read a namespace's
	// OperatingSystemConfigs (a review shows only those MDs), and its
	// provisioningpayloads (else the review is of the view alone: see
	// audiences).
	Authorizer authorizer.UnconditionalAuthorizer
	// Feed says when the informers have listed.
	Feed *changefeed.Feed
}

var (
	_ rest.Storage              = &REST{}
	_ rest.Creater              = &REST{}
	_ rest.Scoper               = &REST{}
	_ rest.SingularNameProvider = &REST{}
	_ rest.TableConvertor       = &REST{}
)

// NewREST returns the storage of profilereviews.
func NewREST(cfg Config) *REST {
	return &REST{cfg: cfg}
}

// resource names the resource in errors.
var resource = osm.Resource(registry.ProfileReviews)

// New implements rest.Storage.
func (r *REST) New() pkgruntime.Object {
	return &osm.ProfileReview{}
}

// Destroy implements rest.Storage.
func (r *REST) Destroy() {}

// NamespaceScoped implements rest.Scoper: a candidate profile in kube-system
// reaches MachineDeployments of every namespace.
func (r *REST) NamespaceScoped() bool {
	return false
}

// GetSingularName implements rest.SingularNameProvider.
func (r *REST) GetSingularName() string {
	return "profilereview"
}

// Create implements rest.Creater: it answers the review in its status.
func (r *REST) Create(ctx context.Context, obj pkgruntime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (pkgruntime.Object, error) {
	in, ok := obj.(*osm.ProfileReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a ProfileReview: %T", obj))
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj); err != nil {
			return nil, err
		}
	}
	user, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewBadRequest("no user in the request")
	}
	c, sel, err := r.candidate(in)
	if err != nil {
		return nil, err
	}
	if err := r.cfg.Feed.WaitListed(ctx); err != nil {
		return nil, registry.FeedError(err)
	}
	mds, err := r.reached(c, &in.Spec, sel)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if mds, err = r.readable(ctx, user, mds); err != nil {
		return nil, err
	}
	audiences, err := r.audiences(ctx, user, mds)
	if err != nil {
		return nil, err
	}
	reviews, err := r.review(ctx, mds, c, audiences)
	if err != nil {
		return nil, err
	}
	out := in.DeepCopy()
	out.Status = osm.ProfileReviewStatus{MachineDeployments: reviews}
	out.Status.Reviewed = int32(len(mds))
	out.Status.Changed, out.Status.Failed = review.Summary(out.Status.MachineDeployments)
	return out, nil
}

// candidate checks the spec and returns the candidate as the review renders
// it: a copy with a UID and revision of its own, so that no parse of the
// profile or overlay it replaces is taken for its own.
func (r *REST) candidate(in *osm.ProfileReview) (*resolve.Candidate, labels.Selector, error) {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if (in.Spec.OperatingSystemProfile == nil) == (in.Spec.Overlay == nil) {
		errs = append(errs, field.Required(spec, "exactly one of operatingSystemProfile and overlay"))
	}
	sel := labels.Everything()
	if s := in.Spec.MachineDeploymentSelector; s != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(s); err != nil {
			errs = append(errs, field.Invalid(spec.Child("machineDeploymentSelector"), s, err.Error()))
		}
	}
	uid := types.UID("profilereview-" + uuid.NewString())
	c := &resolve.Candidate{}
	if osp := in.Spec.OperatingSystemProfile; osp != nil {
		c.OSP = osp.DeepCopy()
		if c.OSP.Namespace == "" {
			c.OSP.Namespace = r.cfg.ProfileNamespace
		}
		if c.OSP.Name == "" {
			errs = append(errs, field.Required(spec.Child("operatingSystemProfile", "metadata", "name"), "the name of the profile the candidate replaces or adds"))
		}
		c.OSP.UID, c.OSP.ResourceVersion = uid, "1"
	}
	if o := in.Spec.Overlay; o != nil {
		c.Overlay = o.DeepCopy()
		path := spec.Child("overlay")
		if o.Namespace == "" || o.Name == "" {
			errs = append(errs, field.Required(path.Child("metadata"), "the namespace and name of the overlay the candidate replaces or adds"))
		} else if err := r.cfg.Overlays.Validate(c.Overlay); err != nil {
			errs = append(errs, field.Invalid(path, o.Name, err.Error()))
		} else if err := render.CheckOverlay(c.Overlay); err != nil {
			errs = append(errs, field.Invalid(path, o.Name, err.Error()))
		}
		c.Overlay.UID, c.Overlay.Generation = uid, 1
	}
	if len(errs) > 0 {
		return nil, nil, apierrors.NewInvalid(osm.Kind("ProfileReview"), in.Name, errs)
	}
	return c, sel, nil
}

// reached returns the MDs the candidate reaches: those of the profile, or
// those the overlay selects now or would select, narrowed by the spec.
func (r *REST) reached(c *resolve.Candidate, spec *osm.ProfileReviewSpec, sel labels.Selector) ([]*clusterv1alpha1.MachineDeployment, error) {
	var mds []*clusterv1alpha1.MachineDeployment
	if c.OSP != nil {
		var err error
		if mds, err = r.cfg.MachineDeployments.UsingProfile(machinecontroller.Profile{Namespace: c.OSP.Namespace, Name: c.OSP.Name}); err != nil {
			return nil, err
		}
	} else {
		var err error
		if mds, err = r.cfg.Overlays.MachineDeployments(c.Overlay, r.cfg.MachineDeployments); err != nil {
			return nil, err
		}
		if r.cfg.Overlays.Overlays != nil {
			current, err := r.cfg.Overlays.Overlays.OperatingSystemProfileOverlays(c.Overlay.Namespace).Get(c.Overlay.Name)
			if err == nil {
				now, err := r.cfg.Overlays.MachineDeployments(current, r.cfg.MachineDeployments)
				if err != nil {
					return nil, err
				}
				mds = append(mds, now...)
			} else if !apierrors.IsNotFound(err) {
				return nil, err
			}
		}
	}
	out := make([]*clusterv1alpha1.MachineDeployment, 0, len(mds))
	for _, md := range mds {
		if _, err := machinecontroller.ProfileOf(md, r.cfg.ProfileNamespace); err == nil && (spec.Namespace == "" || md.Namespace == spec.Namespace) && sel.Matches(labels.Set(md.Labels)) {
			out = append(out, md)
		}
	}
	slices.SortFunc(out, func(a, b *clusterv1alpha1.MachineDeployment) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return slices.CompactFunc(out, func(a, b *clusterv1alpha1.MachineDeployment) bool {
		return a.Namespace == b.Namespace && a.Name == b.Name
	}), nil
}

// review compares every MD as it is and with the candidate, in parallel
// (previews wait for the resolver's preview slots). It stops, and fails,
// once ctx ends: the client went away, or the request timed out.
func (r *REST) review(ctx context.Context, mds []*clusterv1alpha1.MachineDeployment, c *resolve.Candidate, audiences map[string]resolve.Audience) ([]osm.MachineDeploymentReview, error) {
	out := make([]osm.MachineDeploymentReview, len(mds))
	d := review.NewDiffer()
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(mds)) {
		wg.Go(func() {
			for i := range next {
				if ctx.Err() == nil {
					out[i] = r.reviewOne(ctx, mds[i], c, audiences[mds[i].Namespace], d)
				}
			}
		})
	}
	for i := range mds {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, apierrors.NewTimeoutError(fmt.Sprintf("the review was not finished: %v", err), 0)
	}
	return out, nil
}

// reviewOne compares md as it is and with c, as a caller of audience a may
// see it (review.FromRendered).
func (r *REST) reviewOne(ctx context.Context, md *clusterv1alpha1.MachineDeployment, c *resolve.Candidate, a resolve.Audience, d *review.Differ) osm.MachineDeploymentReview {
	before, err := review.FromRendered(r.cfg.Resolver.Resolve(ctx, md), a)
	if err != nil {
		before = review.Side{Err: err.Error()}
	}
	after, err := review.FromRendered(r.cfg.Resolver.Preview(ctx, md, c, a), a)
	if err != nil {
		after = review.Side{Err: err.Error()}
	}
	out := review.Compare(before, after, d)
	out.Namespace, out.Name = md.Namespace, md.Name
	return out
}
