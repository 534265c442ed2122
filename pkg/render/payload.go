package render

import (
	"fmt"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
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

// encodeAll writes both payloads of res.
func (t payloadTarget) encodeAll(res *Result) error {
	var err error
	if res.Bootstrap, err = t.encode(osm.PayloadTypeBootstrap, &res.Config.BootstrapConfig); err != nil {
		return fmt.Errorf("bootstrap payload: %w", err)
	}
	if res.Provisioning, err = t.encode(osm.PayloadTypeProvisioning, &res.Config.ProvisioningConfig); err != nil {
		return fmt.Errorf("provisioning payload: %w", err)
	}
	return nil
}

// encode writes cfg as user-data of the target's format.
func (t payloadTarget) encode(kind osm.PayloadType, cfg *osm.OSCConfig) (Payload, error) {
	hostname := cloudinit.Hostname(kind, t.cloudProvider, t.machineDeployment)
	var (
		data []byte
		err  error
	)
	if t.format == osm.PayloadFormatIgnition {
		// Upstream names edge nodes after their MachineDeployment in cloud-init
		// only; Ignition keeps the placeholder for machine-controller.
		if hostname != "" {
			hostname = machinecontroller.MachineNamePlaceholder
		}
		data, err = ignition.Encode(*cfg, ignition.Options{Hostname: hostname})
	} else {
		data, err = cloudinit.Encode(*cfg, cloudinit.Options{Hostname: hostname, DistUpgradeOnBoot: t.distUpgradeOnBoot})
	}
	if err != nil {
		return Payload{}, err
	}
	return Payload{Format: t.format, UserData: data}, nil
}
