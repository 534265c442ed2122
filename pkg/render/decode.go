package render

import (
	"fmt"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"sigs.k8s.io/yaml"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
)

// DecodeOSP decodes an OperatingSystemProfile manifest (YAML or JSON) strictly:
// an unknown or duplicate field is an error that names it.
func DecodeOSP(data []byte) (*ospv1alpha1.OperatingSystemProfile, error) {
	osp := &ospv1alpha1.OperatingSystemProfile{}
	if err := yaml.UnmarshalStrict(data, osp); err != nil {
		return nil, decodeError(err)
	}
	if osp.Kind != "OperatingSystemProfile" {
		return nil, fmt.Errorf("kind is %q, not OperatingSystemProfile", osp.Kind)
	}
	return osp, nil
}

// DecodeMachineDeployment decodes a MachineDeployment manifest strictly.
func DecodeMachineDeployment(data []byte) (*clusterv1alpha1.MachineDeployment, error) {
	md := &clusterv1alpha1.MachineDeployment{}
	if err := yaml.UnmarshalStrict(data, md); err != nil {
		return nil, decodeError(err)
	}
	if md.Kind != "MachineDeployment" {
		return nil, fmt.Errorf("kind is %q, not MachineDeployment", md.Kind)
	}
	return md, nil
}

// decodeError drops the layers sigs.k8s.io/yaml wraps around encoding/json's
// message: `unknown field "osVersio"` says all.
func decodeError(err error) error {
	msg := err.Error()
	for _, prefix := range []string{"error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	return fmt.Errorf("%s", msg)
}

// DecodeOverlay decodes an OperatingSystemProfileOverlay manifest strictly.
func DecodeOverlay(data []byte) (*overlaysv1alpha1.OperatingSystemProfileOverlay, error) {
	o := &overlaysv1alpha1.OperatingSystemProfileOverlay{}
	if err := yaml.UnmarshalStrict(data, o); err != nil {
		return nil, decodeError(err)
	}
	if o.Kind != "OperatingSystemProfileOverlay" {
		return nil, fmt.Errorf("kind is %q, not OperatingSystemProfileOverlay", o.Kind)
	}
	return o, nil
}
