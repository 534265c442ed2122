package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/Masterminds/semver/v3"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8c.io/machine-controller/sdk/jsonutil"
	"k8c.io/machine-controller/sdk/providerconfig"
	"k8c.io/machine-controller/sdk/userdata/amzn2"
	"k8c.io/machine-controller/sdk/userdata/flatcar"
	"k8c.io/machine-controller/sdk/userdata/rhel"
	"k8c.io/machine-controller/sdk/userdata/rockylinux"
	"k8c.io/machine-controller/sdk/userdata/ubuntu"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/lru"
)

// Decoding a providerSpec strictly costs more than executing a warm OSP, and
// MachineDeployments of a cluster share few distinct providerSpecs: the
// Renderer keeps them decoded, keyed by the providerSpec's bytes.

// parsedProviderSpecs bounds the decoded providerSpecs kept.
const parsedProviderSpecs = 256

// providerSpec is what a render reads from a providerSpec. Shared between
// renders: read-only.
type providerSpec struct {
	pc                *providerconfig.Config
	os                templateData // only the per-OS settings are set
	distUpgradeOnBoot bool
}

// setOSSettings copies the per-OS settings into a render's data.
func (p *providerSpec) setOSSettings(d *templateData) {
	d.AmazonLinuxConfig, d.FlatcarConfig, d.RhelConfig = p.os.AmazonLinuxConfig, p.os.FlatcarConfig, p.os.RhelConfig
	d.UbuntuConfig, d.RockyLinuxConfig = p.os.UbuntuConfig, p.os.RockyLinuxConfig
}

type providerSpecCache struct {
	specs *lru.Cache[string, *providerSpec]
}

func newProviderSpecCache() providerSpecCache {
	return providerSpecCache{specs: lru.New[string, *providerSpec](parsedProviderSpecs)}
}

// get returns md's providerSpec, decoded.
func (c providerSpecCache) get(md *clusterv1alpha1.MachineDeployment) (*providerSpec, error) {
	var raw []byte
	if v := md.Spec.Template.Spec.ProviderSpec.Value; v != nil {
		raw = v.Raw
	}
	if p, ok := c.specs.Get(string(raw)); ok {
		return p, nil
	}
	pc, err := providerConfigOf(md)
	if err != nil {
		return nil, err
	}
	p := &providerSpec{pc: pc}
	if p.distUpgradeOnBoot, err = loadOSSettings(pc, &p.os); err != nil {
		return nil, err
	}
	c.specs.Add(string(raw), p)
	return p, nil
}

// providerConfigOf decodes the MachineDeployment's providerSpec strictly, as
// machine-controller does.
func providerConfigOf(md *clusterv1alpha1.MachineDeployment) (*providerconfig.Config, error) {
	v := md.Spec.Template.Spec.ProviderSpec.Value
	if v == nil || len(v.Raw) == 0 {
		return nil, errors.New("providerSpec.value is empty")
	}
	pc := &providerconfig.Config{}
	if err := jsonutil.StrictUnmarshal(v.Raw, pc); err != nil {
		return nil, fmt.Errorf("providerSpec.value: %w", err)
	}
	return pc, nil
}

// kubeletVersion is the MD's kubelet version with a leading "v" ("v1.29.0").
func kubeletVersion(md *clusterv1alpha1.MachineDeployment) (*semver.Version, string, error) {
	v, err := semver.NewVersion(md.Spec.Template.Spec.Versions.Kubelet)
	if err != nil {
		return nil, "", fmt.Errorf("invalid kubelet version %q: %w", md.Spec.Template.Spec.Versions.Kubelet, err)
	}
	s := v.String()
	if !strings.HasPrefix(s, "v") {
		s = "v" + s
	}
	return v, s, nil
}

// provisioningUtility is how the node applies payloads: Flatcar uses Ignition
// unless its operatingSystemSpec asks for cloud-init; every other OS cloud-init.
func provisioningUtility(pc *providerconfig.Config, flatcarCfg *flatcar.Config) ospv1alpha1.ProvisioningUtility {
	if pc.OperatingSystem == providerconfig.OperatingSystemFlatcar && flatcarCfg.ProvisioningUtility != flatcar.CloudInit {
		return ospv1alpha1.ProvisioningUtilityIgnition
	}
	return ospv1alpha1.ProvisioningUtilityCloudInit
}

func payloadFormat(p ospv1alpha1.ProvisioningUtility) osm.PayloadFormat {
	if p == ospv1alpha1.ProvisioningUtilityIgnition {
		return osm.PayloadFormatIgnition
	}
	return osm.PayloadFormatCloudInit
}

// loadOSSettings decodes the providerSpec's operatingSystemSpec for its OS.
func loadOSSettings(pc *providerconfig.Config, s *templateData) (distUpgradeOnBoot bool, err error) {
	switch pc.OperatingSystem {
	case providerconfig.OperatingSystemAmazonLinux2:
		var c *amzn2.Config
		if c, err = amzn2.LoadConfig(pc.OperatingSystemSpec); err == nil {
			s.AmazonLinuxConfig, distUpgradeOnBoot = *c, c.DistUpgradeOnBoot
		}
	case providerconfig.OperatingSystemFlatcar:
		var c *flatcar.Config
		if c, err = flatcar.LoadConfig(pc.OperatingSystemSpec); err == nil {
			s.FlatcarConfig = *c
			// Flatcar's config has no such field, but upstream's generator reads
			// it from every OS's spec: it matters for Flatcar on cloud-init.
			var common struct {
				DistUpgradeOnBoot bool `json:"distUpgradeOnBoot"`
			}
			if len(pc.OperatingSystemSpec.Raw) > 0 {
				err = json.Unmarshal(pc.OperatingSystemSpec.Raw, &common)
			}
			distUpgradeOnBoot = common.DistUpgradeOnBoot
		}
	case providerconfig.OperatingSystemRHEL:
		var c *rhel.Config
		if c, err = rhel.LoadConfig(pc.OperatingSystemSpec); err == nil {
			s.RhelConfig, distUpgradeOnBoot = *c, c.DistUpgradeOnBoot
		}
	case providerconfig.OperatingSystemRockyLinux:
		var c *rockylinux.Config
		if c, err = rockylinux.LoadConfig(pc.OperatingSystemSpec); err == nil {
			s.RockyLinuxConfig, distUpgradeOnBoot = *c, c.DistUpgradeOnBoot
		}
	case providerconfig.OperatingSystemUbuntu:
		var c *ubuntu.Config
		if c, err = ubuntu.LoadConfig(pc.OperatingSystemSpec); err == nil {
			s.UbuntuConfig, distUpgradeOnBoot = *c, c.DistUpgradeOnBoot
		}
	default:
		return false, fmt.Errorf("unknown operating system %q", pc.OperatingSystem)
	}
	if err != nil {
		return false, fmt.Errorf("operatingSystemSpec: %w", err)
	}
	return distUpgradeOnBoot, nil
}

// rhSubscription is the rh_subscription module RHEL nodes get from their
// operatingSystemSpec.
func rhSubscription(c *rhel.Config) map[string]string {
	if c.RHELUseSatelliteServer {
		return map[string]string{
			"org":             c.RHELOrganizationName,
			"activation-key":  c.RHELActivationKey,
			"server-hostname": c.RHELSatelliteServer,
			"rhsm-baseurl":    "https://" + c.RHELSatelliteServer + "/pulp/repos",
		}
	}
	return map[string]string{
		"username":    c.RHELSubscriptionManagerUser,
		"password":    c.RHELSubscriptionManagerPassword,
		"auto-attach": fmt.Sprint(c.AttachSubscription),
	}
}

// hasInTreeCloudProvider says whether the kubelet uses an in-tree cloud
// provider: aws, azure, gce and vsphere have one unless --external-cloud-provider.
func hasInTreeCloudProvider(cloud providerconfig.CloudProvider, external bool) bool {
	switch cloud {
	case providerconfig.CloudProviderAWS, providerconfig.CloudProviderAzure,
		providerconfig.CloudProviderGoogle, providerconfig.CloudProviderVsphere:
		return !external
	}
	return false
}

// parseIPs turns the cluster DNS IPs into net.IPs, which templates print as upstream.
func parseIPs(ips []string) ([]net.IP, error) {
	out := make([]net.IP, 0, len(ips))
	for _, s := range ips {
		ip := net.ParseIP(strings.TrimSpace(s))
		if ip == nil {
			return nil, fmt.Errorf("invalid cluster DNS IP %q", s)
		}
		out = append(out, ip)
	}
	return out, nil
}

// serverAddress is the host[:port] of the API server URL.
func serverAddress(serverURL string) string {
	if u, err := url.Parse(serverURL); err == nil && u.Host != "" {
		return u.Host
	}
	return serverURL
}

// supportsCloud refuses a cloud provider the profile does not list in
// supportedCloudProviders, as upstream does: its templates were written (and
// its payloads sized) for those clouds only.
func supportsCloud(osp *ospv1alpha1.OperatingSystemProfile, cloud providerconfig.CloudProvider) error {
	names := make([]string, len(osp.Spec.SupportedCloudProviders))
	for i, c := range osp.Spec.SupportedCloudProviders {
		if string(c.Name) == string(cloud) {
			return nil
		}
		names[i] = string(c.Name)
	}
	return fmt.Errorf("cloud provider %q is not supported by operatingsystemprofile %s (supportedCloudProviders: %s)",
		cloud, osp.Name, strings.Join(names, ", "))
}
