package machines

import (
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/client-go/tools/cache"
)

// newMachineDeploymentInformer is pkg/informers.NewMachineDeployments, which
// imports this package, so its tests cannot use it.
func newMachineDeploymentInformer(lw cache.ListerWatcher, profileNamespace string) cache.SharedIndexInformer {
	return cache.NewSharedIndexInformer(lw, &clusterv1alpha1.MachineDeployment{}, 0, MachineDeploymentIndexers(profileNamespace))
}
