package provisioningpayload

import (
	"fmt"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

// types are the payloads of one MD, in the order they are listed; only MDs on
// cloud provider edge have an edge-script.
var types = []osm.PayloadType{osm.PayloadTypeBootstrap, osm.PayloadTypeProvisioning, osm.PayloadTypeEdgeScript}

func payloadName(mdName string, kind osm.PayloadType) string {
	return mdName + "-" + string(kind)
}

func parseName(name string) (string, osm.PayloadType, bool) {
	for _, kind := range types {
		if md, ok := strings.CutSuffix(name, "-"+string(kind)); ok && md != "" {
			return md, kind, true
		}
	}
	return "", "", false
}

// objects: an MD has two payloads while its render succeeds (three on cloud
// provider edge), none otherwise.
type objects struct{}

func (objects) Names(md *clusterv1alpha1.MachineDeployment) []string {
	names := []string{payloadName(md.Name, osm.PayloadTypeBootstrap), payloadName(md.Name, osm.PayloadTypeProvisioning)}
	if machinecontroller.CloudProvider(md) == machinecontroller.CloudProviderEdge {
		names = append(names, payloadName(md.Name, osm.PayloadTypeEdgeScript))
	}
	return names
}

func (objects) MachineDeployment(name string) (string, bool) {
	md, _, ok := parseName(name)
	return md, ok
}

func (objects) Object(md *clusterv1alpha1.MachineDeployment, out *resolve.Rendered, name, rv string) (runtime.Object, error) {
	_, kind, _ := parseName(name)
	if kind == osm.PayloadTypeEdgeScript && machinecontroller.CloudProvider(md) != machinecontroller.CloudProviderEdge {
		return nil, nil
	}
	if out.Err != nil {
		return nil, fmt.Errorf("machinedeployment %s/%s has no %s payload: %w", md.Namespace, md.Name, kind, out.Err)
	}
	p := out.Payload(kind)
	if p.Format == "" {
		return nil, fmt.Errorf("machinedeployment %s/%s has no %s payload", md.Namespace, md.Name, kind)
	}
	data, err := p.UserData()
	if err != nil {
		return nil, fmt.Errorf("machinedeployment %s/%s: %w", md.Namespace, md.Name, err)
	}
	cloud := out.CloudProvider
	return &osm.ProvisioningPayload{
		ObjectMeta: registry.ObjectMeta(md, name, rv),
		Spec: osm.ProvisioningPayloadSpec{
			MachineDeployment: md.Name,
			Type:              kind,
			Format:            p.Format,
			CloudProvider:     cloud,
			UserData:          string(data),
			Size:              p.Size,
			SHA256:            p.SHA256,
			UserDataLimit:     userDataLimit(kind, cloud),
		},
	}, nil
}

// Stub names the payload, without content: there is none.
func (objects) Stub(md *clusterv1alpha1.MachineDeployment, name, rv string) runtime.Object {
	_, kind, _ := parseName(name)
	return &osm.ProvisioningPayload{
		ObjectMeta: registry.ObjectMeta(md, name, rv),
		Spec:       osm.ProvisioningPayloadSpec{MachineDeployment: md.Name, Type: kind},
	}
}

func (objects) List(objs []runtime.Object) runtime.Object {
	list := &osm.ProvisioningPayloadList{Items: make([]osm.ProvisioningPayload, len(objs))}
	for i, obj := range objs {
		list.Items[i] = *obj.(*osm.ProvisioningPayload)
	}
	return list
}
