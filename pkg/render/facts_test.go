package render

import (
	"testing"

	"k8c.io/machine-controller/sdk/providerconfig"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestLoadOSSettingsDistUpgradeOnBoot: upstream reads distUpgradeOnBoot from
// any OS's operatingSystemSpec (its generator decodes a common struct), so
// Flatcar on cloud-init upgrades packages on boot too when asked to.
func TestLoadOSSettingsDistUpgradeOnBoot(t *testing.T) {
	tests := []struct {
		os   providerconfig.OperatingSystem
		spec string
		want bool
	}{
		{providerconfig.OperatingSystemUbuntu, `{"distUpgradeOnBoot":true}`, true},
		{providerconfig.OperatingSystemUbuntu, `{}`, false},
		{providerconfig.OperatingSystemRHEL, `{"distUpgradeOnBoot":true}`, true},
		{providerconfig.OperatingSystemRockyLinux, `{"distUpgradeOnBoot":true}`, true},
		{providerconfig.OperatingSystemAmazonLinux2, `{"distUpgradeOnBoot":true}`, true},
		{providerconfig.OperatingSystemFlatcar, `{"provisioningUtility":"cloud-init","distUpgradeOnBoot":true}`, true},
		{providerconfig.OperatingSystemFlatcar, `{"provisioningUtility":"cloud-init"}`, false},
		{providerconfig.OperatingSystemFlatcar, ``, false},
	}
	for _, tc := range tests {
		pc := &providerconfig.Config{OperatingSystem: tc.os}
		if tc.spec != "" {
			pc.OperatingSystemSpec = runtime.RawExtension{Raw: []byte(tc.spec)}
		}
		var d templateData
		got, err := loadOSSettings(pc, &d)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.os, tc.spec, err)
		}
		if got != tc.want {
			t.Errorf("%s %s: distUpgradeOnBoot = %v, want %v", tc.os, tc.spec, got, tc.want)
		}
	}
}
