package render

import (
	"encoding/base64"
	"strings"
	"testing"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// A profile joins through a MachineJoin when its bootstrap reads
// .MachineJoinURL, in a file or a named template it calls; reading it in the
// provisioning config only (which nodes get from the exchange) or not at all
// is the compatibility mode. A profile that does not parse has no mode.
func TestNodeJoin(t *testing.T) {
	file := func(data string) ospv1alpha1.File {
		return ospv1alpha1.File{Path: "/opt/bin/join", Content: ospv1alpha1.FileContent{Inline: &ospv1alpha1.FileContentInline{Data: data}}}
	}
	for _, tc := range []struct {
		name   string
		modify func(osp *ospv1alpha1.OperatingSystemProfile)
		want   osm.NodeJoinMode
		err    string
	}{
		{"reads .Token", func(*ospv1alpha1.OperatingSystemProfile) {}, osm.NodeJoinCompatibility, ""},
		{"bootstrap file", func(osp *ospv1alpha1.OperatingSystemProfile) {
			osp.Spec.BootstrapConfig.Files = append(osp.Spec.BootstrapConfig.Files, file("curl -X POST {{ .MachineJoinURL }}"))
		}, osm.NodeJoinMachineJoin, ""},
		{"bootstrap template", func(osp *ospv1alpha1.OperatingSystemProfile) {
			osp.Spec.BootstrapConfig.Templates = map[string]string{"join": "url={{ $.MachineJoinURL }}"}
			osp.Spec.BootstrapConfig.Files = append(osp.Spec.BootstrapConfig.Files, file(`{{ template "join" }}`))
		}, osm.NodeJoinMachineJoin, ""},
		{"provisioning only", func(osp *ospv1alpha1.OperatingSystemProfile) {
			osp.Spec.ProvisioningConfig.Files = append(osp.Spec.ProvisioningConfig.Files, file("{{ .MachineJoinURL }}"))
		}, osm.NodeJoinCompatibility, ""},
		{"broken", func(osp *ospv1alpha1.OperatingSystemProfile) {
			osp.Spec.BootstrapConfig.Files = append(osp.Spec.BootstrapConfig.Files, file("{{ .MachineJoinURL "))
		}, "", "bootstrapConfig file /opt/bin/join"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := goldenInput(t)
			tc.modify(in.OSP)
			got, err := NewRenderer().NodeJoin(in.OSP, nil, "containerd")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("mode %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// The edge join script of a profile that joins through a MachineJoin carries
// the bootstrap payload (with its placeholder) instead of fetching it.
func TestEdgeScriptCarriesTheBootstrap(t *testing.T) {
	in := goldenInput(t)
	in.MachineDeployment = testMachineDeployment(in.MachineDeployment.Annotations, strings.Replace(awsUbuntu, `"aws"`, `"edge"`, 1))
	in.OSP.Spec.SupportedCloudProviders = append(in.OSP.Spec.SupportedCloudProviders, ospv1alpha1.CloudProviderSpec{Name: "edge"})
	fetched, err := NewRenderer().Render(in)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(fetched.EdgeScript.UserData); !strings.Contains(s, "/secrets/") || strings.Contains(s, "OSM_BOOTSTRAP") {
		t.Errorf("the compatibility script does not fetch the bootstrap Secret:\n%s", s)
	}
	in.OSP.Spec.BootstrapConfig.Files = append(in.OSP.Spec.BootstrapConfig.Files, ospv1alpha1.File{
		Path: "/etc/osm/machine-name", Content: ospv1alpha1.FileContent{Inline: &ospv1alpha1.FileContentInline{Data: "{{ .MachineName }}"}}})
	in.OSP.Spec.BootstrapConfig.Files[0].Content.Inline.Data += "{{ .MachineJoinURL }}"
	carried, err := NewRenderer().Render(in)
	if err != nil {
		t.Fatal(err)
	}
	s := string(carried.EdgeScript.UserData)
	if strings.Contains(s, "/secrets/") || !strings.Contains(s, "OSM_MACHINE_NAME") {
		t.Errorf("the MachineJoin script fetches a Secret or names no machine:\n%s", s)
	}
	if !strings.Contains(string(carried.Bootstrap.UserData), "<MACHINE_NAME>") || !strings.Contains(s, base64.StdEncoding.EncodeToString(carried.Bootstrap.UserData)) {
		t.Error("the MachineJoin script does not carry the bootstrap payload with its placeholder")
	}
}
