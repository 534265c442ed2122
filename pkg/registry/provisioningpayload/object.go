package provisioningpayload

import (
	"fmt"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/rendercache"
)

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

func newObject(md *clusterv1alpha1.MachineDeployment, e *rendercache.Entry, kind osm.PayloadType, rv string) (*osm.ProvisioningPayload, error) {
	p := e.Payload(kind)
	data, err := p.UserData()
	if err != nil {
		return nil, fmt.Errorf("machinedeployment %s/%s: %w", md.Namespace, md.Name, err)
	}
	cloud := e.CloudProvider
	return &osm.ProvisioningPayload{
		ObjectMeta: registry.ObjectMeta(md, payloadName(md.Name, kind), rv),
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
