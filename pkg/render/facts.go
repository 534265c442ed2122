package render

import (
	"maps"
	"slices"
	"sync"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8c.io/machine-controller/sdk/providerconfig"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// Decoding a providerSpec strictly and writing the containerd files cost more
// than executing a warm OSP, and both repeat across renders: the Renderer keeps
// them, keyed by the providerSpec's bytes and by the node options.

// providerFacts is what a render reads from a providerSpec. Shared between
// renders: read-only.
type providerFacts struct {
	pc                *providerconfig.Config
	os                templateData // only the per-OS settings are set
	distUpgradeOnBoot bool
}

// setOSSettings copies the per-OS settings into a render's data.
func (f *providerFacts) setOSSettings(d *templateData) {
	d.AmazonLinuxConfig, d.FlatcarConfig, d.RhelConfig = f.os.AmazonLinuxConfig, f.os.FlatcarConfig, f.os.RhelConfig
	d.UbuntuConfig, d.RockyLinuxConfig = f.os.UbuntuConfig, f.os.RockyLinuxConfig
}

const providerCacheSize = 256

type providerCache struct {
	mu    sync.Mutex
	facts map[string]*providerFacts
}

func (c *providerCache) get(md *clusterv1alpha1.MachineDeployment) (*providerFacts, error) {
	var raw []byte
	if v := md.Spec.Template.Spec.ProviderSpec.Value; v != nil {
		raw = v.Raw
	}
	c.mu.Lock()
	f, ok := c.facts[string(raw)]
	c.mu.Unlock()
	if ok {
		return f, nil
	}
	pc, err := providerConfigOf(md)
	if err != nil {
		return nil, err
	}
	f = &providerFacts{pc: pc}
	if f.distUpgradeOnBoot, err = loadOSSettings(pc, &f.os); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.facts == nil || len(c.facts) >= providerCacheSize {
		c.facts = map[string]*providerFacts{}
	}
	c.facts[string(raw)] = f
	return f, nil
}

// containerdFiles are the containerd files for one set of node options.
type containerdFiles struct {
	node   NodeOptions // the options they were written for, deep-copied
	config string
	hosts  []osm.File
}

type containerdCache struct {
	mu   sync.Mutex
	last *containerdFiles
}

// get returns config.toml and hosts.toml files for n; the files are the
// caller's to keep.
func (c *containerdCache) get(n *NodeOptions) (string, []osm.File) {
	c.mu.Lock()
	last := c.last
	c.mu.Unlock()
	if last == nil || !sameContainerdOptions(&last.node, n) {
		last = &containerdFiles{node: copyContainerdOptions(n), config: containerdConfig(n), hosts: registryHostFiles(n)}
		c.mu.Lock()
		c.last = last
		c.mu.Unlock()
	}
	hosts := make([]osm.File, len(last.hosts))
	inline := make([]osm.FileContentInline, len(last.hosts))
	for i, f := range last.hosts {
		inline[i] = *f.Content.Inline
		hosts[i] = osm.File{Path: f.Path, Permissions: f.Permissions, Content: osm.FileContent{Inline: &inline[i]}}
	}
	return last.config, hosts
}

func sameContainerdOptions(a, b *NodeOptions) bool {
	return a.PauseImage == b.PauseImage &&
		a.DeviceOwnershipFromSecurityContext == b.DeviceOwnershipFromSecurityContext &&
		slices.Equal(a.InsecureRegistries, b.InsecureRegistries) &&
		slices.Equal(a.RegistryMirrors, b.RegistryMirrors) &&
		maps.EqualFunc(a.ContainerdRegistryMirrors, b.ContainerdRegistryMirrors, slices.Equal) &&
		maps.Equal(a.RegistryCredentials, b.RegistryCredentials)
}

func copyContainerdOptions(n *NodeOptions) NodeOptions {
	c := NodeOptions{
		PauseImage:                         n.PauseImage,
		DeviceOwnershipFromSecurityContext: n.DeviceOwnershipFromSecurityContext,
		InsecureRegistries:                 slices.Clone(n.InsecureRegistries),
		RegistryMirrors:                    slices.Clone(n.RegistryMirrors),
		RegistryCredentials:                maps.Clone(n.RegistryCredentials),
	}
	if n.ContainerdRegistryMirrors != nil {
		c.ContainerdRegistryMirrors = make(map[string][]string, len(n.ContainerdRegistryMirrors))
		for k, v := range n.ContainerdRegistryMirrors {
			c.ContainerdRegistryMirrors[k] = slices.Clone(v)
		}
	}
	return c
}
