package machines

import (
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// machine-controller rolls MachineDeployments out the way Deployments roll out:
// a changed template gets a new MachineSet with the next revision, and the
// MD's revision annotation follows — unless the MD is paused. A Machine's
// user-data must be rendered from the template of its MachineSet's revision,
// which may no longer be the MD's template (a paused MD, or the moments before
// the revision bump). MachineSets hold that template.

// ownerIndex indexes MachineSets by the MachineDeployment that controls them.
const ownerIndex = "owner"

// MachineSetIndexers are the indexes of a MachineSet informer that
// RevisionTemplates and MachineReader read: by the MachineDeployment that
// controls them.
func MachineSetIndexers() cache.Indexers {
	return cache.Indexers{ownerIndex: ownerIndexFunc}
}

// ownerIndexFunc is the function of ownerIndex (machinecontroller.MachineDeploymentOf).
func ownerIndexFunc(obj any) ([]string, error) {
	if ms, ok := obj.(*clusterv1alpha1.MachineSet); ok {
		if ref, ok := machinecontroller.MachineDeploymentOf(ms); ok {
			return []string{ref.String()}, nil
		}
	}
	return nil, nil
}

// RevisionTemplates finds the template of a MachineDeployment's revision.
type RevisionTemplates struct {
	indexer cache.Indexer
}

// NewRevisionTemplates reads the indexer of an informer from NewMachineSetInformer.
func NewRevisionTemplates(indexer cache.Indexer) *RevisionTemplates {
	return &RevisionTemplates{indexer: indexer}
}

// MachineSet returns md's MachineSet of md's current revision, nil when there
// is none (a new MD, or a revision whose MachineSet is not seen yet, which
// machine-controller creates from the MD's template of that moment: then the
// MD's own template is the revision's).
func (t *RevisionTemplates) MachineSet(md *clusterv1alpha1.MachineDeployment) *clusterv1alpha1.MachineSet {
	revision := md.Annotations[machinecontroller.AnnotationMDRevision]
	if t == nil || revision == "" {
		return nil
	}
	objs, err := t.indexer.ByIndex(ownerIndex, machinecontroller.Ref{Namespace: md.Namespace, Name: md.Name}.String())
	if err != nil {
		return nil
	}
	for _, obj := range objs {
		ms := obj.(*clusterv1alpha1.MachineSet)
		if metav1.GetControllerOf(ms).UID == md.UID && ms.Annotations[machinecontroller.AnnotationMDRevision] == revision && ms.DeletionTimestamp == nil {
			return ms
		}
	}
	return nil
}

// TemplateChanged says whether md's template differs from ms's in what a
// render reads (the MachineSpec): md then waits for its next revision.
func TemplateChanged(md *clusterv1alpha1.MachineDeployment, ms *clusterv1alpha1.MachineSet) bool {
	return !equality.Semantic.DeepEqual(ms.Spec.Template.Spec, md.Spec.Template.Spec)
}

// ProfileOf is machinecontroller.ProfileOf with the default of the operating system of md's
// revision's template, which the payloads of that revision are rendered from
// (see MachineSet); t may be nil: md's own template.
func (t *RevisionTemplates) ProfileOf(md *clusterv1alpha1.MachineDeployment, defaultNamespace string) (machinecontroller.Profile, error) {
	if md.Annotations[machinecontroller.AnnotationOSP] == "" {
		if ms := t.MachineSet(md); ms != nil {
			return machinecontroller.ProfileOfTemplate(md, &ms.Spec.Template.Spec, defaultNamespace)
		}
	}
	return machinecontroller.ProfileOf(md, defaultNamespace)
}
