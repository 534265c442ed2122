package machines

import (
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// MachineSetIndex indexes Machines by the MachineSet that controls them
// ("<namespace>/<machineset>").
const MachineSetIndex = "machineset"

// NodeNameIndex indexes Machines by the names their node may have
// (machinecontroller.NodeNames).
const NodeNameIndex = "nodename"

// MachineIndexers are the indexes of a Machine informer that MachineReader
// reads: by namespace, by their MachineSet and by their node names.
func MachineIndexers() cache.Indexers {
	return cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		NodeNameIndex:        NodeNameIndexFunc,
		MachineSetIndex:      MachineSetIndexFunc,
	}
}

// NodeNameIndexFunc is the function of NodeNameIndex.
func NodeNameIndexFunc(obj any) ([]string, error) {
	if m, ok := obj.(*clusterv1alpha1.Machine); ok {
		return machinecontroller.NodeNames(m), nil
	}
	return nil, nil
}

// MachineSetIndexFunc is the function of MachineSetIndex.
func MachineSetIndexFunc(obj any) ([]string, error) {
	if m, ok := obj.(*clusterv1alpha1.Machine); ok {
		if owner := metav1.GetControllerOf(m); owner != nil && owner.Kind == "MachineSet" {
			return []string{m.Namespace + "/" + owner.Name}, nil
		}
	}
	return nil, nil
}

// MachineReader reads Machines, the MachineDeployments they belong to and
// whether their Node exists, from the caches of a Machine, a MachineSet and a
// Node informer. Objects it returns belong to the caches: callers must not
// modify them.
type MachineReader struct {
	machines    cache.Indexer
	machineSets cache.Indexer
	nodes       cache.Indexer
}

// NewMachineReader reads the indexers of informers from NewMachineInformer,
// NewMachineSetInformer and NewNodeInformer; nodes may be nil (then only a
// Machine's status.nodeRef says it has a Node).
func NewMachineReader(machines, machineSets, nodes cache.Indexer) *MachineReader {
	return &MachineReader{machines: machines, machineSets: machineSets, nodes: nodes}
}

// Get returns one Machine or a NotFound error.
func (r *MachineReader) Get(namespace, name string) (*clusterv1alpha1.Machine, error) {
	obj, exists, err := r.machines.GetByKey(namespace + "/" + name)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, errors.NewNotFound(machinecontroller.Machines, name)
	}
	return obj.(*clusterv1alpha1.Machine), nil
}

// MachineDeploymentOf returns the MachineDeployment that owns m: the
// controller of the MachineSet that controls m (the MachineSet of the
// reference's uid, not one recreated under its name). ok is false for a
// Machine of no MachineSet (made by hand) or whose MachineSet is not known.
func (r *MachineReader) MachineDeploymentOf(m *clusterv1alpha1.Machine) (ref machinecontroller.Ref, ok bool) {
	owner := metav1.GetControllerOf(m)
	if owner == nil || owner.Kind != "MachineSet" {
		return machinecontroller.Ref{}, false
	}
	obj, exists, err := r.machineSets.GetByKey(m.Namespace + "/" + owner.Name)
	if err != nil || !exists {
		return machinecontroller.Ref{}, false
	}
	ms := obj.(*clusterv1alpha1.MachineSet)
	if ms.UID != owner.UID {
		return machinecontroller.Ref{}, false
	}
	return machinecontroller.MachineDeploymentOf(ms)
}

// MachineOwner is a Machine and the MachineDeployment that owns it.
type MachineOwner struct {
	// Machine is the informer's object: do not modify it.
	Machine *clusterv1alpha1.Machine
	// MachineDeployment and its UID (the MachineSet's controller reference).
	MachineDeployment machinecontroller.Ref
	UID               types.UID
}

// Owner returns Machine namespace/name and its MachineDeployment: a NotFound
// error when the cache has no such Machine, another error that says why when
// it belongs to no MachineDeployment.
func (r *MachineReader) Owner(namespace, name string) (MachineOwner, error) {
	m, err := r.Get(namespace, name)
	if err != nil {
		return MachineOwner{}, err
	}
	owner := metav1.GetControllerOf(m)
	if owner == nil || owner.Kind != "MachineSet" {
		return MachineOwner{}, fmt.Errorf("machine %s/%s is controlled by no MachineSet", namespace, name)
	}
	obj, exists, err := r.machineSets.GetByKey(namespace + "/" + owner.Name)
	if err != nil {
		return MachineOwner{}, err
	}
	if !exists || obj.(*clusterv1alpha1.MachineSet).UID != owner.UID {
		return MachineOwner{}, fmt.Errorf("machine %s/%s: its MachineSet %s is not known", namespace, name, owner.Name)
	}
	ms := obj.(*clusterv1alpha1.MachineSet)
	ref, ok := machinecontroller.MachineDeploymentOf(ms)
	if !ok {
		return MachineOwner{}, fmt.Errorf("machine %s/%s: its MachineSet %s is controlled by no MachineDeployment", namespace, name, ms.Name)
	}
	return MachineOwner{Machine: m, MachineDeployment: ref, UID: metav1.GetControllerOf(ms).UID}, nil
}

// OfMachineDeployment returns the Machines of the MachineDeployment ref,
// through the MachineSets it controls.
func (r *MachineReader) OfMachineDeployment(ref machinecontroller.Ref) ([]*clusterv1alpha1.Machine, error) {
	sets, err := r.machineSets.ByIndex(ownerIndex, ref.String())
	if err != nil {
		return nil, err
	}
	var machines []*clusterv1alpha1.Machine
	for _, obj := range sets {
		ms := obj.(*clusterv1alpha1.MachineSet)
		objs, err := r.machines.ByIndex(MachineSetIndex, ms.Namespace+"/"+ms.Name)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			m := o.(*clusterv1alpha1.Machine)
			if owner := metav1.GetControllerOf(m); owner != nil && owner.UID == ms.UID {
				machines = append(machines, m)
			}
		}
	}
	return machines, nil
}

// ByNodeName returns the Machines whose node may be called name.
func (r *MachineReader) ByNodeName(name string) ([]*clusterv1alpha1.Machine, error) {
	objs, err := r.machines.ByIndex(NodeNameIndex, name)
	if err != nil {
		return nil, err
	}
	machines := make([]*clusterv1alpha1.Machine, len(objs))
	for i, obj := range objs {
		machines[i] = obj.(*clusterv1alpha1.Machine)
	}
	return machines, nil
}
