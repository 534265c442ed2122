package render

import (
	"bytes"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// TestPayloadHostname checks upstream's hostname rule per format: on edge the
// cloud-init payload names the node after the MachineDeployment, while Ignition
// keeps the <MACHINE_NAME> placeholder (upstream's generator substitutes the
// name only in its cloud-init template).
func TestPayloadHostname(t *testing.T) {
	tests := []struct {
		format osm.PayloadFormat
		cloud  string
		kind   osm.PayloadType
		want   string // expected in the payload
		absent string // must not be in the payload
	}{
		{osm.PayloadFormatCloudInit, "edge", osm.PayloadTypeBootstrap, "md-edge", "<MACHINE_NAME>"},
		{osm.PayloadFormatIgnition, "edge", osm.PayloadTypeBootstrap, "%3CMACHINE_NAME%3E", "md-edge"},
		{osm.PayloadFormatIgnition, "hetzner", osm.PayloadTypeBootstrap, "%3CMACHINE_NAME%3E", "md-edge"},
		{osm.PayloadFormatCloudInit, "hetzner", osm.PayloadTypeBootstrap, "<MACHINE_NAME>", "md-edge"},
		{osm.PayloadFormatCloudInit, "aws", osm.PayloadTypeBootstrap, "", "MACHINE_NAME"},
		{osm.PayloadFormatIgnition, "aws", osm.PayloadTypeBootstrap, "", "MACHINE_NAME"},
		{osm.PayloadFormatCloudInit, "edge", osm.PayloadTypeProvisioning, "", "md-edge"},
	}
	for _, tc := range tests {
		target := payloadTarget{format: tc.format, cloudProvider: tc.cloud, machineDeployment: "md-edge"}
		p, err := target.encode(tc.kind, &osm.OSCConfig{})
		if err != nil {
			t.Fatalf("%s/%s/%s: %v", tc.format, tc.cloud, tc.kind, err)
		}
		if tc.want != "" && !bytes.Contains(p.UserData, []byte(tc.want)) {
			t.Errorf("%s/%s/%s: payload lacks %q:\n%s", tc.format, tc.cloud, tc.kind, tc.want, p.UserData)
		}
		if bytes.Contains(p.UserData, []byte(tc.absent)) {
			t.Errorf("%s/%s/%s: payload has %q:\n%s", tc.format, tc.cloud, tc.kind, tc.absent, p.UserData)
		}
	}
}
