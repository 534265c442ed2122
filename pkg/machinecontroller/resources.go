package machinecontroller

import (
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// The resources of machine-controller that osm-apiserver reads; pkg/machines
// reads them from informer caches.
var (
	// MachineDeployments is the group and resource of MachineDeployments.
	MachineDeployments = clusterv1alpha1.Resource("machinedeployments")
	// MachineSets is the group and resource of MachineSets.
	MachineSets = clusterv1alpha1.Resource("machinesets")
	// Machines is the group and resource of Machines.
	Machines = clusterv1alpha1.Resource("machines")
)

// StripManagedFields is the transform of every informer of ours: managed
// fields are often as big as the object itself and nothing reads them.
// Annotations stay, they feed renders; namespace, labels and annotations are
// interned (InternMeta).
func StripManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	InternMeta(obj)
	// Tombstones and other non-objects pass unchanged.
	return obj, nil
}
