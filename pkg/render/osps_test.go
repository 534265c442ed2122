package render_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_3"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// machineDeploymentFor is base with the providerSpec's operating system and
// cloud replaced (cloudProviderSpec emptied, operatingSystemSpec null).
func machineDeploymentFor(t testing.TB, base *clusterv1alpha1.MachineDeployment, os, cloud string) *clusterv1alpha1.MachineDeployment {
	t.Helper()
	md := base.DeepCopy()
	var pc map[string]any
	if err := json.Unmarshal(md.Spec.Template.Spec.ProviderSpec.Value.Raw, &pc); err != nil {
		t.Fatal(err)
	}
	pc["operatingSystem"] = os
	pc["cloudProvider"] = cloud
	pc["cloudProviderSpec"] = map[string]any{}
	pc["operatingSystemSpec"] = nil
	raw, err := json.Marshal(pc)
	if err != nil {
		t.Fatal(err)
	}
	md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: raw}
	md.Annotations["k8c.io/operating-system-profile"] = "osp-" + os
	return md
}

// TestDefaultOSPs renders every upstream default OSP for every cloud it lists
// and checks the payloads parse: Ignition configs as spec 3.x, cloud-configs as YAML.
func TestDefaultOSPs(t *testing.T) {
	up := upstreamDir(t)
	base := caseInput(t, filepath.Join(up, "cases", "ubuntu-aws-containerd"))
	paths, err := filepath.Glob(filepath.Join(up, "deploy", "osps", "default", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no default OSPs: %v", err)
	}
	r := render.NewRenderer()
	for _, path := range paths {
		osp := decodeFile(t, path, render.DecodeOSP)
		for _, cloud := range osp.Spec.SupportedCloudProviders {
			for _, kubelet := range []string{"1.31.4", "1.28.15"} {
				t.Run(osp.Name+"/"+string(cloud.Name)+"/"+kubelet, func(t *testing.T) {
					in := base
					in.OSP = osp
					in.Node.ExternalCloudProvider = false
					in.MachineDeployment = machineDeploymentFor(t, base.MachineDeployment, string(osp.Spec.OSName), string(cloud.Name))
					in.MachineDeployment.Spec.Template.Spec.Versions.Kubelet = kubelet
					if cloud.Name == "gce" {
						// The project of the in-tree provider comes from the service account.
						setProviderField(t, in.MachineDeployment, "cloudProviderSpec", `{"serviceAccount":"eyJwcm9qZWN0X2lkIjoicCJ9","zone":"europe-west3-a"}`)
					}
					if osp.Spec.ProvisioningUtility == "cloud-init" && osp.Spec.OSName == "flatcar" {
						setOperatingSystemSpec(t, in.MachineDeployment, `{"provisioningUtility":"cloud-init"}`)
					}
					res, err := r.Render(in)
					if err != nil {
						t.Fatalf("render: %v", err)
					}
					for name, p := range map[string]render.Payload{"bootstrap": res.Bootstrap, "provisioning": res.Provisioning} {
						checkPayload(t, name, p)
					}
				})
			}
		}
	}
}

func checkPayload(t *testing.T, name string, p render.Payload) {
	t.Helper()
	switch p.Format {
	case osm.PayloadFormatIgnition:
		cfg, report, err := v3_3.Parse(p.UserData)
		if err != nil || report.IsFatal() {
			t.Errorf("%s payload is not an Ignition 3.3 config: %v %s", name, err, report)
		}
		if !strings.HasPrefix(cfg.Ignition.Version, "3.") {
			t.Errorf("%s payload: ignition version %q", name, cfg.Ignition.Version)
		}
	case osm.PayloadFormatCloudInit:
		doc, err := parseCloudConfig(p.UserData)
		if err != nil {
			t.Errorf("%s payload is not a cloud-config: %v", name, err)
		} else if _, ok := doc["write_files"]; !ok {
			t.Errorf("%s payload writes no files", name)
		}
	default:
		t.Errorf("%s payload: unknown format %q", name, p.Format)
	}
}

func setOperatingSystemSpec(t testing.TB, md *clusterv1alpha1.MachineDeployment, spec string) {
	t.Helper()
	setProviderField(t, md, "operatingSystemSpec", spec)
}

// setProviderField sets one field of the providerSpec to raw JSON.
func setProviderField(t testing.TB, md *clusterv1alpha1.MachineDeployment, field, value string) {
	t.Helper()
	var pc map[string]any
	if err := json.Unmarshal(md.Spec.Template.Spec.ProviderSpec.Value.Raw, &pc); err != nil {
		t.Fatal(err)
	}
	pc[field] = json.RawMessage(value)
	raw, err := json.Marshal(pc)
	if err != nil {
		t.Fatal(err)
	}
	md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: raw}
}
