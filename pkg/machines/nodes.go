package machines

import (
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Whether a Machine has joined is whether its Node exists: machine-controller
// sets status.nodeRef once it matched the Node to the Machine, and before
// that (or without machine-controller) a Node of one of
// machinecontroller.NodeNames says so.
// Only Nodes' names matter, so their informer holds metadata only.

// NodeOf returns the name of m's Node: status.nodeRef, or the first of
// machinecontroller.NodeNames(m) that a Node of the node informer has. ok is
// false while m has no Node.
func (r *MachineReader) NodeOf(m *clusterv1alpha1.Machine) (name string, ok bool) {
	if m.Status.NodeRef != nil && m.Status.NodeRef.Name != "" {
		return m.Status.NodeRef.Name, true
	}
	if r.nodes == nil {
		return "", false
	}
	for _, n := range machinecontroller.NodeNames(m) {
		if _, exists, err := r.nodes.GetByKey(n); err == nil && exists {
			return n, true
		}
	}
	return "", false
}
