package bootreports

import (
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Informer watches the metadata of the reports' Secrets: their owner,
// machine, state, revision and last update are all labels and annotations,
// so it never holds a log tail. Every replica runs it: the
// OperatingSystemConfigs' machine summaries are counted from it. The
// leader's syncer deletes reports through it.
type Informer struct {
	informer cache.SharedIndexInformer
}

// ownerIndex indexes reports by their MachineDeployment (Ref.String).
const ownerIndex = "owner"

// FromInformer reads the informer of the reports' metadata, indexed by
// Indexers (pkg/informers.NewBootReports builds it).
func FromInformer(i cache.SharedIndexInformer) *Informer {
	return &Informer{informer: i}
}

// Indexers are the indexes of the reports' informer.
func Indexers() cache.Indexers {
	return cache.Indexers{ownerIndex: func(obj any) ([]string, error) {
		if m, ok := obj.(metav1.Object); ok {
			if ref, ok := machinecontroller.Owner(m); ok {
				return []string{ref.String()}, nil
			}
		}
		return nil, nil
	}}
}

// HasSynced says whether the informer has listed once.
func (i *Informer) HasSynced() bool {
	return i.informer.HasSynced()
}

// Informer is the shared informer, for event handlers.
func (i *Informer) Informer() cache.SharedIndexInformer {
	return i.informer
}

// List returns the metadata of every report (the cache's: read-only).
func (i *Informer) List() []metav1.Object {
	return objects(i.informer.GetStore().List())
}

// Owned returns the metadata of the reports of the MachineDeployment ref.
func (i *Informer) Owned(ref machinecontroller.Ref) []metav1.Object {
	objs, err := i.informer.GetIndexer().ByIndex(ownerIndex, ref.String())
	if err != nil {
		return nil
	}
	return objects(objs)
}

func objects(objs []any) []metav1.Object {
	out := make([]metav1.Object, 0, len(objs))
	for _, obj := range objs {
		if m, ok := obj.(metav1.Object); ok {
			out = append(out, m)
		}
	}
	return out
}

// Summary counts the reports of md's machines, nil when there are none.
func (i *Informer) Summary(md *clusterv1alpha1.MachineDeployment) *osm.MachineSummary {
	return Summarize(i.Owned(machinecontroller.RefOf(md)), md.Annotations[machinecontroller.AnnotationMDRevision])
}

// Summarize counts reports by state: succeeded with revision, succeeded
// with another, failed, under way; nil for no reports.
func Summarize(reports []metav1.Object, revision string) *osm.MachineSummary {
	if len(reports) == 0 {
		return nil
	}
	var s osm.MachineSummary
	for _, r := range reports {
		switch osm.BootState(r.GetLabels()[StateLabel]) {
		case osm.BootStateSucceeded:
			if r.GetAnnotations()[RevisionAnnotation] == revision {
				s.Current++
			} else {
				s.Older++
			}
		case osm.BootStateFailed:
			s.Failed++
		default:
			s.Provisioning++
		}
	}
	return &s
}

// SummaryChanged says whether an update of a report's Secret (or its
// metadata) from old to cur can change its MachineDeployment's summary.
func SummaryChanged(old, cur any) bool {
	o, ok1 := old.(metav1.Object)
	n, ok2 := cur.(metav1.Object)
	return !ok1 || !ok2 || o.GetLabels()[StateLabel] != n.GetLabels()[StateLabel] ||
		o.GetAnnotations()[RevisionAnnotation] != n.GetAnnotations()[RevisionAnnotation]
}

// Start runs the informer until stop closes (pkg/informers.Set starts it in
// the server; tests start it here).
func (i *Informer) Start(stop <-chan struct{}) {
	go i.informer.Run(stop)
}
