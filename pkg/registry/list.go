package registry

import (
	"context"
	"fmt"
	"slices"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
)

// LabelSelector returns the request's label selector, or everything.
func LabelSelector(options *metainternalversion.ListOptions) labels.Selector {
	if options != nil && options.LabelSelector != nil {
		return options.LabelSelector
	}
	return labels.Everything()
}

// FieldSelector returns the request's field selector, or nil for none.
func FieldSelector(options *metainternalversion.ListOptions) fields.Selector {
	if options != nil && options.FieldSelector != nil && !options.FieldSelector.Empty() {
		return options.FieldSelector
	}
	return nil
}

// MatchesFields reports whether an object's metadata matches selector (nil
// matches everything). Only metadata.name and metadata.namespace are fields.
func MatchesFields(meta *metav1.ObjectMeta, selector fields.Selector) bool {
	if selector == nil {
		return true
	}
	return selector.Matches(generic.AddObjectMetaFieldsSet(make(fields.Set, 2), meta, true))
}

// ListMachineDeployments returns the MDs with a rendered output in the request's
// namespace that match its label selector, sorted by namespace and name as
// kube-apiserver sorts lists.
func ListMachineDeployments(ctx context.Context, mds machines.Lister, options *metainternalversion.ListOptions) ([]*clusterv1alpha1.MachineDeployment, error) {
	namespace := genericapirequest.NamespaceValue(ctx)
	selector := LabelSelector(options)
	all, err := mds.List(namespace, selector)
	if err != nil {
		return nil, fmt.Errorf("failed to list machinedeployments: %w", err)
	}
	// Every MD has an output. Sort in place: the slice is ours, the objects
	// are the cache's.
	out := all
	slices.SortFunc(out, func(a, b *clusterv1alpha1.MachineDeployment) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}
