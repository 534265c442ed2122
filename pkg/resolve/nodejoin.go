package resolve

import "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"

// What the credential in a node's user-data can do, per node join mode: the
// OperatingSystemConfig's status.nodeJoin and the syncer's Event on an MD in
// compatibility mode say it in these words.
const (
	machineJoinMessage = "Each machine exchanges the fetch credential of its user-data once (MachineJoin), " +
		"for the provisioning payload and a short-lived kubelet bootstrap credential that only the node of that machine can use; " +
		"the credential reads no Secret, and nothing in the user-data works for anything once the machine joined."
	compatibilityMessage = "Compatibility mode: the profile reads the MachineDeployment's Secrets with the fetch credential of the user-data (.Token): " +
		"the provisioning payload and the kubelet bootstrap kubeconfig, whose bootstrap token every machine of the MachineDeployment shares " +
		"and which can ask for a client certificate of any node name for as long as the MachineDeployment exists. " +
		"A leaked user-data is worth more than with a profile that posts a MachineJoin (.MachineJoinURL), as the default profiles from v0.4.0 do."
)

// NodeJoinStatus is the status.nodeJoin of an OperatingSystemConfig whose
// nodes join in mode; nil for "" (the profile is not known or does not parse).
func NodeJoinStatus(mode osm.NodeJoinMode) *osm.NodeJoinStatus {
	switch mode {
	case osm.NodeJoinMachineJoin:
		return &osm.NodeJoinStatus{Mode: mode, Message: machineJoinMessage}
	case osm.NodeJoinCompatibility:
		return &osm.NodeJoinStatus{Mode: mode, Message: compatibilityMessage}
	}
	return nil
}
