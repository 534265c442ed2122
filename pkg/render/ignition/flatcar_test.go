package ignition

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// flatcarOSP is upstream's default Flatcar OSP; see ../shared/upstream-osm/README.md.
const flatcarOSP = "../../../../shared/upstream-osm/deploy/osps/default/osp-flatcar.yaml"

// loadFlatcarConfigs returns the bootstrap and provisioning configs of upstream's
// Flatcar OSP, templates left unrendered (to Ignition they are just text), with
// the container runtime's files added as the render engine adds them.
func loadFlatcarConfigs(t testing.TB) (bootstrap, provisioning osm.OSCConfig) {
	t.Helper()
	if _, err := os.Stat(flatcarOSP); os.IsNotExist(err) {
		t.Skipf("%s not found (the shared data is outside this repository)", filepath.Base(flatcarOSP))
	}
	bootstrap, provisioning = loadOSPConfigs(t, flatcarOSP)
	if len(provisioning.Files) == 0 || len(provisioning.Units) == 0 {
		t.Fatalf("%s: no files or units in provisioningConfig", flatcarOSP)
	}
	return bootstrap, provisioning
}

// loadOSPConfigs returns the bootstrap and provisioning configs of the OSP in
// file path, templates left unrendered, with the first container runtime's
// files and an SSH key added to the provisioning config.
func loadOSPConfigs(t testing.TB, path string) (bootstrap, provisioning osm.OSCConfig) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var osp struct {
		Spec struct {
			BootstrapConfig    v1alpha1.OSCConfig `json:"bootstrapConfig"`
			ProvisioningConfig struct {
				v1alpha1.OSCConfig         `json:",inline"`
				SupportedContainerRuntimes []struct {
					Files []v1alpha1.File `json:"files"`
				} `json:"supportedContainerRuntimes"`
			} `json:"provisioningConfig"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &osp); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	prov := osp.Spec.ProvisioningConfig.OSCConfig
	if rt := osp.Spec.ProvisioningConfig.SupportedContainerRuntimes; len(rt) > 0 {
		prov.Files = append(prov.Files, rt[0].Files...)
	}
	prov.UserSSHKeys = []string{"ssh-rsa AAAA"}
	if err := v1alpha1.Convert_v1alpha1_OSCConfig_To_osm_OSCConfig(&osp.Spec.BootstrapConfig, &bootstrap, nil); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.Convert_v1alpha1_OSCConfig_To_osm_OSCConfig(&prov, &provisioning, nil); err != nil {
		t.Fatal(err)
	}
	return bootstrap, provisioning
}

// TestFlatcarOSP encodes upstream's Flatcar OSP without a warning and checks
// that Ignition parses the result.
func TestFlatcarOSP(t *testing.T) {
	boot, prov := loadFlatcarConfigs(t)
	for name, cfg := range map[string]osm.OSCConfig{"bootstrap": boot, "provisioning": prov} {
		t.Run(name, func(t *testing.T) {
			out, err := Encode(cfg, Options{Hostname: machinecontroller.MachineNamePlaceholder})
			if err != nil {
				t.Fatal(err)
			}
			got := parse(t, out)
			if len(got.Storage.Files) != len(cfg.Files)+1 || len(got.Systemd.Units) != len(cfg.Units) {
				t.Errorf("got %d files and %d units, want %d and %d", len(got.Storage.Files), len(got.Systemd.Units), len(cfg.Files)+1, len(cfg.Units))
			}
		})
	}
}

// BenchmarkEncode encodes both payloads of upstream's Flatcar OSP, as one
// render does; BenchmarkEncodeWithButane does it through butane.
func BenchmarkEncode(b *testing.B)           { benchmarkEncode(b, Encode) }
func BenchmarkEncodeWithButane(b *testing.B) { benchmarkEncode(b, EncodeWithButane) }

func benchmarkEncode(b *testing.B, encode func(osm.OSCConfig, Options) ([]byte, error)) {
	boot, prov := loadFlatcarConfigs(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encode(boot, Options{Hostname: machinecontroller.MachineNamePlaceholder}); err != nil {
			b.Fatal(err)
		}
		if _, err := encode(prov, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
