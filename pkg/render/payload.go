package render

import (
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/render/cloudinit"
	"github.com/osm-apiserver/osm-apiserver/pkg/render/ignition"
)

// payloadTarget is what, beyond the config, shapes a MachineDeployment's payloads.
type payloadTarget struct {
	format            osm.PayloadFormat
	cloudProvider     string
	machineDeployment string
	distUpgradeOnBoot bool
}

// encode writes cfg as user-data of the target's format.
func (t payloadTarget) encode(kind osm.PayloadType, cfg *osm.OSCConfig) (Payload, error) {
	hostname := cloudinit.Hostname(kind, t.cloudProvider, t.machineDeployment)
	var (
		data []byte
		err  error
	)
	if t.format == osm.PayloadFormatIgnition {
		data, err = ignition.EncodeWithOptions(*cfg, ignition.Options{Hostname: hostname})
	} else {
		data, err = cloudinit.EncodeWithOptions(*cfg, cloudinit.Options{Hostname: hostname, DistUpgradeOnBoot: t.distUpgradeOnBoot})
	}
	if err != nil {
		return Payload{}, err
	}
	return Payload{Format: t.format, UserData: data}, nil
}
