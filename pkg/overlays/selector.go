// Package overlays decides which OperatingSystemProfileOverlays apply to a
// MachineDeployment, in which order, and which MachineDeployments an overlay
// reaches. An overlay applies to an MD when it names the MD's profile, its
// label selector matches the MD's labels, and the MD is within its reach:
// the overlay's own namespace, or, for an overlay in osm-apiserver's own
// namespace (--namespace), the namespaces it names (every one when it names
// none). Overlays of the server's namespace apply first, then those of the
// MD's namespace, each by name.
package overlays

import (
	"fmt"
	"slices"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	overlaylisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// Overlay is the API type, for short.
type Overlay = overlaysv1alpha1.OperatingSystemProfileOverlay

// Selector finds the overlays that apply to MachineDeployments.
type Selector struct {
	// ServerNamespace is osm-apiserver's namespace (--namespace): its
	// overlays may reach MachineDeployments of every namespace, and it is
	// where profiles of MDs that name no namespace are.
	ServerNamespace string
	// Overlays lists the overlays (an informer's lister); nil lists none.
	Overlays overlaylisters.OperatingSystemProfileOverlayLister
}

// For returns the overlays that apply to md, in the order they apply. An
// invalid overlay among them is an error (a *render.OverlayError): md must
// not be rendered without what the overlay was meant to add. The overlays
// belong to the informer's cache and must not be modified.
func (s *Selector) For(md *clusterv1alpha1.MachineDeployment) ([]*Overlay, error) {
	return s.ForWith(md, nil)
}

// ForWith is For with candidate in place of the overlay of its namespace
// and name (or added): what a review of the candidate renders.
func (s *Selector) ForWith(md *clusterv1alpha1.MachineDeployment, candidate *Overlay) ([]*Overlay, error) {
	if s == nil || (s.Overlays == nil && candidate == nil) {
		return nil, nil
	}
	namespaces := []string{s.ServerNamespace}
	if md.Namespace != s.ServerNamespace {
		namespaces = append(namespaces, md.Namespace)
	}
	var out []*Overlay
	for _, ns := range namespaces {
		var list []*Overlay
		if s.Overlays != nil {
			var err error
			if list, err = s.Overlays.OperatingSystemProfileOverlays(ns).List(labels.Everything()); err != nil {
				return nil, fmt.Errorf("failed to list operatingsystemprofileoverlays in %s: %w", ns, err)
			}
		}
		if candidate != nil && candidate.Namespace == ns {
			list = slices.DeleteFunc(slices.Clone(list), func(o *Overlay) bool { return o.Name == candidate.Name })
			list = append(list, candidate)
		}
		start := len(out)
		for _, o := range list {
			ok, err := s.Selects(o, md)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, o)
			}
		}
		slices.SortFunc(out[start:], func(a, b *Overlay) int { return strings.Compare(a.Name, b.Name) })
	}
	return out, nil
}

// Selects reports whether o applies to md. An invalid o that would apply
// (it names md's profile and md is in its own namespace) is an error.
func (s *Selector) Selects(o *Overlay, md *clusterv1alpha1.MachineDeployment) (bool, error) {
	// An MD without a profile (its operating system has no default) has no
	// overlays either: its output is that error.
	p, err := machinecontroller.ProfileOf(md, s.ServerNamespace)
	if err != nil || !NamesProfile(o, p) || !s.reaches(o, md.Namespace) {
		return false, nil
	}
	if err := s.Validate(o); err != nil {
		return true, err
	}
	if o.Spec.MachineDeploymentSelector == nil {
		return true, nil
	}
	// Validate parsed it already.
	sel, _ := metav1.LabelSelectorAsSelector(o.Spec.MachineDeploymentSelector)
	return sel.Matches(labels.Set(md.Labels)), nil
}

// reaches says whether MDs of namespace are within o's reach; an overlay
// outside the server's namespace reaches its own namespace only, and only
// when it does not name others (then it is invalid and reaches none).
func (s *Selector) reaches(o *Overlay, namespace string) bool {
	names := o.Spec.Namespaces
	if o.Namespace == s.ServerNamespace {
		return len(names) == 0 || slices.Contains(names, namespace)
	}
	return namespace == o.Namespace && (len(names) == 0 || slices.Contains(names, namespace))
}

// Validate returns why o cannot apply as written: it names a namespace it
// may not reach, or its selector is malformed (a *render.OverlayError).
func (s *Selector) Validate(o *Overlay) error {
	if o.Namespace != s.ServerNamespace {
		for _, ns := range o.Spec.Namespaces {
			if ns != o.Namespace {
				return &render.OverlayError{Overlay: render.OverlayRef(o), Err: fmt.Errorf(
					"invalid: spec.namespaces names %s, but an overlay in namespace %s reaches only its own MachineDeployments (overlays that reach other namespaces live in %s)",
					ns, o.Namespace, s.ServerNamespace)}
			}
		}
	}
	if len(o.Spec.Profiles) == 0 {
		return &render.OverlayError{Overlay: render.OverlayRef(o), Err: fmt.Errorf("invalid: spec.profiles names no profile")}
	}
	if o.Spec.MachineDeploymentSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(o.Spec.MachineDeploymentSelector); err != nil {
			return &render.OverlayError{Overlay: render.OverlayRef(o), Err: fmt.Errorf("invalid: spec.machineDeploymentSelector: %w", err)}
		}
	}
	return nil
}

// NamesProfile says whether o names p: by name, or as namespace/name.
func NamesProfile(o *Overlay, p machinecontroller.Profile) bool {
	for _, name := range o.Spec.Profiles {
		if ns, n, ok := strings.Cut(name, "/"); ok {
			if ns == p.Namespace && n == p.Name {
				return true
			}
		} else if name == p.Name {
			return true
		}
	}
	return false
}

// MachineDeployments returns the MDs o applies to (or would, were it
// valid), from mds.
func (s *Selector) MachineDeployments(o *Overlay, mds machines.Lister) ([]*clusterv1alpha1.MachineDeployment, error) {
	var candidates []*clusterv1alpha1.MachineDeployment
	switch {
	case o.Namespace != s.ServerNamespace:
		list, err := mds.List(o.Namespace, labels.Everything())
		if err != nil {
			return nil, err
		}
		candidates = list
	case len(o.Spec.Namespaces) == 0:
		list, err := mds.List(metav1.NamespaceAll, labels.Everything())
		if err != nil {
			return nil, err
		}
		candidates = list
	default:
		for _, ns := range o.Spec.Namespaces {
			list, err := mds.List(ns, labels.Everything())
			if err != nil {
				return nil, err
			}
			candidates = append(candidates, list...)
		}
	}
	out := candidates[:0:0]
	for _, md := range candidates {
		if ok, _ := s.Selects(o, md); ok {
			out = append(out, md)
		}
	}
	return out, nil
}
