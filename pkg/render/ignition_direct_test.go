package render_test

import (
	"bytes"
	"path/filepath"
	"testing"

	defaultosps "github.com/osm-apiserver/osm-apiserver/artifacts/default-osps"
	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/render/cloudinit"
	"github.com/osm-apiserver/osm-apiserver/pkg/render/ignition"
)

// TestIgnitionPayloadsMatchButane renders the Ignition OSPs (ours and
// upstream's osp-flatcar) for every cloud they support, with and without proxy
// and registry settings, and checks that each payload is byte for byte what
// butane's translation of the rendered config gives (ignition.EncodeWithButane).
func TestIgnitionPayloadsMatchButane(t *testing.T) {
	up := upstreamDir(t)
	base := caseInput(t, filepath.Join(up, "cases", "ubuntu-aws-containerd"))
	osps, err := defaultosps.Load()
	if err != nil {
		t.Fatal(err)
	}
	osps = append(osps, decodeFile(t, filepath.Join(up, "deploy", "osps", "default", "osp-flatcar.yaml"), render.DecodeOSP))
	r := render.NewRenderer()
	rendered := 0
	for i, osp := range osps {
		if osp.Spec.ProvisioningUtility != ospv1alpha1.ProvisioningUtilityIgnition {
			continue
		}
		name := osp.Name
		if i == len(osps)-1 {
			name = "upstream-" + name
		}
		for _, cloud := range osp.Spec.SupportedCloudProviders {
			for _, node := range []string{"plain", "proxy-and-registries"} {
				t.Run(name+"/"+string(cloud.Name)+"/"+node, func(t *testing.T) {
					in := base
					in.OSP = osp
					in.MachineDeployment = machineDeploymentFor(t, base.MachineDeployment, string(osp.Spec.OSName), string(cloud.Name))
					if cloud.Name == "gce" {
						setProviderField(t, in.MachineDeployment, "cloudProviderSpec", `{"serviceAccount":"eyJwcm9qZWN0X2lkIjoicCJ9","zone":"europe-west3-a"}`)
					}
					if node == "proxy-and-registries" {
						in.Node.HTTPProxy, in.Node.NoProxy = "http://proxy.example.com:3128", "10.0.0.0/8,.svc"
						in.Node.InsecureRegistries = []string{"10.0.0.1:5000"}
						in.Node.RegistryMirrors = []string{"https://mirror.example.com"}
					}
					res, err := r.Render(in)
					if err != nil {
						t.Fatalf("render: %v", err)
					}
					for kind, p := range map[osm.PayloadType]*render.Payload{osm.PayloadTypeBootstrap: &res.Bootstrap, osm.PayloadTypeProvisioning: &res.Provisioning} {
						cfg := res.Config.ProvisioningConfig
						if kind == osm.PayloadTypeBootstrap {
							cfg = res.Config.BootstrapConfig
						}
						// As the renderer chooses the hostname of Ignition payloads.
						var opts ignition.Options
						if cloudinit.Hostname(kind, string(cloud.Name), in.MachineDeployment.Name) != "" {
							opts.Hostname = machinecontroller.MachineNamePlaceholder
						}
						want, err := ignition.EncodeWithButane(cfg, opts)
						if err != nil {
							t.Fatalf("%s: butane: %v", kind, err)
						}
						if !bytes.Equal(p.UserData, want) {
							t.Errorf("%s payload differs from butane's:\ngot  %s\nwant %s", kind, p.UserData, want)
						}
					}
					rendered++
				})
			}
		}
	}
	if rendered == 0 {
		t.Fatal("no Ignition OSP rendered")
	}
}
