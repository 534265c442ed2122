package machinecontroller

import (
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// ObjectReference refers to md for Events: MachineDeployments are custom
// resources the event recorders' schemes do not know, so the reference is
// built by hand.
func ObjectReference(md *clusterv1alpha1.MachineDeployment) *corev1.ObjectReference {
	return &corev1.ObjectReference{
		APIVersion:      clusterv1alpha1.SchemeGroupVersion.String(),
		Kind:            "MachineDeployment",
		Namespace:       md.Namespace,
		Name:            md.Name,
		UID:             md.UID,
		ResourceVersion: md.ResourceVersion,
	}
}
