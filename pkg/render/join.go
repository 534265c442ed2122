package render

import (
	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
)

// Nodes of a profile whose bootstrap posts a MachineJoin (it reads
// .MachineJoinURL) join through that exchange: the credential in their
// user-data gets the kubelet's bootstrap kubeconfig and the provisioning
// payload once, for the machine named in the user-data. Every other profile
// reads the MachineDeployment's Secrets with .Token, as upstream's do: the
// compatibility mode, in which every machine of the MD shares one kubelet
// bootstrap token. The dependency analysis of the parsed templates tells the
// two apart, so the mode is known before anything is rendered.

// machineJoinField is the template data that makes a profile use the exchange.
const machineJoinField = "MachineJoinURL"

// NodeJoin says how nodes of osp with its overlays, rendered for
// containerRuntime, get their kubelet credentials. It parses the profile
// once per revision and overlay generations, as Render does.
func (r *Renderer) NodeJoin(osp *ospv1alpha1.OperatingSystemProfile, overlays []*overlaysv1alpha1.OperatingSystemProfileOverlay, containerRuntime string) (osm.NodeJoinMode, error) {
	compiled, err := r.compiled.get(osp, overlays, containerRuntime)
	if err != nil {
		return "", err
	}
	if compiled.bootstrap.templates.Reads(machineJoinField) {
		return osm.NodeJoinMachineJoin, nil
	}
	return osm.NodeJoinCompatibility, nil
}
