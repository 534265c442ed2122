package machinecontroller

import (
	"slices"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// machine-controller makes a Machine for every replica of a MachineSet, with
// the MachineSet as its controller (ownerReference) and the template's labels;
// the MachineSet's controller is the MachineDeployment. It names the VM and,
// except on AWS, the node after the Machine, and writes the cloud's addresses
// of the instance (its private DNS name on AWS, where that is the node's name)
// into the Machine's status.addresses, and the Node into status.nodeRef once
// the Node registered.

// NodeNames are the names the node of m may register under: the Machine's
// name (machine-controller names VMs and their hostnames after it), and the
// host names machine-controller reported for its instance (status.addresses
// of type Hostname and InternalDNS: on AWS the node keeps the instance's
// private DNS name). Node names are lower case.
func NodeNames(m *clusterv1alpha1.Machine) []string {
	names := []string{strings.ToLower(m.Name)}
	for _, a := range m.Status.Addresses {
		if a.Type != corev1.NodeHostName && a.Type != corev1.NodeInternalDNS || a.Address == "" {
			continue
		}
		name := strings.ToLower(a.Address)
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}
