package machinecontroller

import (
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// A Machine is one VM of a MachineDeployment: machine-controller creates it
// for a MachineSet of the MD, names the VM after it (the <MACHINE_NAME> of
// the user-data) and sets status.nodeRef once the node registered. Nodes
// name their Machine when they report; which MD owns it decides whose
// credential may.

// Machines is the group and resource of Machines.
var Machines = clusterv1alpha1.Resource("machines")

// machineSetIndex indexes Machines by the MachineSet that controls them.
const machineSetIndex = "machineset"

// NewMachineListWatch returns a ListerWatcher of all Machines of the cluster
// that config points at.
func NewMachineListWatch(config *rest.Config) (cache.ListerWatcher, error) {
	return newListWatch(config, Machines.Resource)
}

// NewMachineInformer returns an informer of Machines fed by lw, indexed by
// the MachineSet that controls them. It keeps only their metadata and
// status.nodeRef: specs (providerSpecs with cloud settings) are big and
// nothing here reads them.
//
// The index is by MachineSet, not by MachineDeployment: a Machine names its
// MachineSet, and the MachineSet its MD, so an index through the MachineSet
// informer would go stale whenever a MachineSet is seen after its Machines.
// MachineOwners resolves the second step at read time.
func NewMachineInformer(lw cache.ListerWatcher) cache.SharedIndexInformer {
	i := cache.NewSharedIndexInformer(lw, &clusterv1alpha1.Machine{}, 0, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		machineSetIndex: func(obj any) ([]string, error) {
			if m, ok := obj.(*clusterv1alpha1.Machine); ok {
				if owner := metav1.GetControllerOf(m); owner != nil && owner.Kind == "MachineSet" {
					return []string{m.Namespace + "/" + owner.Name}, nil
				}
			}
			return nil, nil
		},
	})
	_ = i.SetTransform(stripMachine)
	return i
}

func stripMachine(obj any) (any, error) {
	m, ok := obj.(*clusterv1alpha1.Machine)
	if !ok {
		return obj, nil
	}
	out := &clusterv1alpha1.Machine{TypeMeta: m.TypeMeta, ObjectMeta: m.ObjectMeta}
	out.ManagedFields = nil
	out.Status.NodeRef = m.Status.NodeRef
	return out, nil
}

// MachineOwners answers which MachineDeployment owns a Machine: the one that
// controls the MachineSet that controls it, matched by UID at both steps.
type MachineOwners struct {
	// Machines is the indexer of an informer from NewMachineInformer.
	Machines cache.Indexer
	// MachineSets is the indexer of an informer from NewMachineSetInformer.
	MachineSets cache.Indexer
}

// MachineOwner is a Machine and the MachineDeployment that owns it.
type MachineOwner struct {
	// Machine is the informer's object: do not modify it.
	Machine *clusterv1alpha1.Machine
	// MachineDeployment and its UID.
	MachineDeployment Ref
	UID               types.UID
}

// Owner returns Machine namespace/name and its MachineDeployment: a NotFound
// error when the cache has no such Machine, another error when it belongs to
// no MachineDeployment (no controlling MachineSet, or one no MD controls).
func (o *MachineOwners) Owner(namespace, name string) (MachineOwner, error) {
	obj, exists, err := o.Machines.GetByKey(namespace + "/" + name)
	if err != nil {
		return MachineOwner{}, err
	}
	if !exists {
		return MachineOwner{}, apierrors.NewNotFound(Machines, name)
	}
	m := obj.(*clusterv1alpha1.Machine)
	owner := metav1.GetControllerOf(m)
	if owner == nil || owner.Kind != "MachineSet" {
		return MachineOwner{}, fmt.Errorf("machine %s/%s is controlled by no MachineSet", namespace, name)
	}
	obj, exists, err = o.MachineSets.GetByKey(namespace + "/" + owner.Name)
	if err != nil {
		return MachineOwner{}, err
	}
	if !exists || obj.(*clusterv1alpha1.MachineSet).UID != owner.UID {
		return MachineOwner{}, fmt.Errorf("machine %s/%s: its MachineSet %s is not known", namespace, name, owner.Name)
	}
	ms := obj.(*clusterv1alpha1.MachineSet)
	ref, ok := MachineDeploymentOf(ms)
	if !ok {
		return MachineOwner{}, fmt.Errorf("machine %s/%s: its MachineSet %s is controlled by no MachineDeployment", namespace, name, ms.Name)
	}
	return MachineOwner{Machine: m, MachineDeployment: ref, UID: metav1.GetControllerOf(ms).UID}, nil
}

// Exists reports whether the cache has Machine namespace/name.
func (o *MachineOwners) Exists(namespace, name string) bool {
	_, exists, err := o.Machines.GetByKey(namespace + "/" + name)
	return err == nil && exists
}

// MachinesOf returns the Machines of the MachineDeployment ref, through its
// MachineSets.
func (o *MachineOwners) MachinesOf(ref Ref) ([]*clusterv1alpha1.Machine, error) {
	sets, err := o.MachineSets.ByIndex(ownerIndex, ref.String())
	if err != nil {
		return nil, err
	}
	var out []*clusterv1alpha1.Machine
	for _, obj := range sets {
		ms := obj.(*clusterv1alpha1.MachineSet)
		machines, err := o.Machines.ByIndex(machineSetIndex, ms.Namespace+"/"+ms.Name)
		if err != nil {
			return nil, err
		}
		for _, mobj := range machines {
			m := mobj.(*clusterv1alpha1.Machine)
			if owner := metav1.GetControllerOf(m); owner != nil && owner.UID == ms.UID {
				out = append(out, m)
			}
		}
	}
	return out, nil
}
