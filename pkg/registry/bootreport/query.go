package bootreport

import (
	"context"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
)

// query is a LIST or WATCH of BootReports as one of the reports' Secrets:
// the request's namespace and the label requirements on the labels reports
// and Secrets share go to kube-apiserver (and a name, when a namespace says
// which Secret it is); everything else of the selectors is applied to the
// converted reports, so that a selection is exactly that of the reports'
// own labels and fields.
type query struct {
	secretOptions metav1.ListOptions
	labels        labels.Selector
	fields        fields.Selector
}

func newQuery(ctx context.Context, options *metainternalversion.ListOptions) query {
	namespace := genericapirequest.NamespaceValue(ctx)
	q := query{labels: registry.LabelSelector(options), fields: registry.FieldSelector(options)}
	selector := bootreports.Selector(namespace)
	if reqs, ok := q.labels.Requirements(); ok {
		for _, r := range reqs {
			if r.Key() == bootreports.StateLabel {
				selector = selector.Add(r)
			}
		}
	}
	secretFields := fields.Set{"type": string(bootreports.SecretType)}
	if q.fields != nil && namespace != "" {
		if name, ok := q.fields.RequiresExactMatch("metadata.name"); ok {
			secretFields["metadata.name"] = bootreports.SecretName(namespace, name)
		}
	}
	q.secretOptions = metav1.ListOptions{LabelSelector: selector.String(), FieldSelector: secretFields.String()}
	if options != nil {
		o := &q.secretOptions
		o.ResourceVersion, o.ResourceVersionMatch = options.ResourceVersion, options.ResourceVersionMatch
		o.Limit, o.Continue = options.Limit, options.Continue
		o.TimeoutSeconds = options.TimeoutSeconds
		o.AllowWatchBookmarks, o.SendInitialEvents = options.AllowWatchBookmarks, options.SendInitialEvents
	}
	return q
}

// matches says whether a report is of the query's selection.
func (q query) matches(report *osm.BootReport) bool {
	return q.labels.Matches(labels.Set(report.Labels)) && registry.MatchesFields(&report.ObjectMeta, q.fields)
}
