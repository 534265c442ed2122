package render

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/lru"
)

// Writing the containerd files costs more than executing a warm OSP and
// repeats for every MachineDeployment: the Renderer keeps them per set of
// node options (a server has one set at a time, a few across changes).
const containerdFileSets = 8

// containerdFiles are config.toml and the hosts.toml files for one set of
// node options. Shared between renders: read-only.
type containerdFiles struct {
	config string
	hosts  []osm.File
}

type containerdCache struct {
	files *lru.Cache[string, *containerdFiles]
}

func newContainerdCache() containerdCache {
	return containerdCache{files: lru.New[string, *containerdFiles](containerdFileSets)}
}

// get returns config.toml and the hosts.toml files for n; the files are the
// caller's to keep.
func (c containerdCache) get(n *NodeOptions) (string, []osm.File) {
	key := containerdKey(n)
	f, ok := c.files.Get(key)
	if !ok {
		f = &containerdFiles{config: containerdConfig(n), hosts: registryHostFiles(n)}
		c.files.Add(key, f)
	}
	hosts := make([]osm.File, len(f.hosts))
	inline := make([]osm.FileContentInline, len(f.hosts))
	for i, h := range f.hosts {
		inline[i] = *h.Content.Inline
		hosts[i] = osm.File{Path: h.Path, Permissions: h.Permissions, Content: osm.FileContent{Inline: &inline[i]}}
	}
	return f.config, hosts
}

// containerdKey joins every node option the containerd files are written
// from; a NUL cannot occur in flag values, so distinct options give distinct keys.
func containerdKey(n *NodeOptions) string {
	var b strings.Builder
	field := func(s string) { b.WriteString(s); b.WriteByte(0) }
	field(n.PauseImage)
	field(strconv.FormatBool(n.DeviceOwnershipFromSecurityContext))
	field(strings.Join(n.InsecureRegistries, "\x01"))
	field(strings.Join(n.RegistryMirrors, "\x01"))
	for _, registry := range sortedKeys(n.ContainerdRegistryMirrors) {
		field(registry)
		field(strings.Join(n.ContainerdRegistryMirrors[registry], "\x01"))
	}
	b.WriteByte(1)
	for _, registry := range sortedKeys(n.RegistryCredentials) {
		a := n.RegistryCredentials[registry]
		for _, s := range []string{registry, a.Username, a.Password, a.Auth, a.IdentityToken} {
			field(s)
		}
	}
	return b.String()
}

const (
	containerdConfigDir = "/etc/containerd/certs.d"
	dockerHubRegistry   = "docker.io"
	dockerHubEndpoint   = "https://registry-1.docker.io"
	hostsFilePerms      = 600
)

// registryMirrorPattern splits "registry=mirror" entries of --node-registry-mirrors.
var registryMirrorPattern = regexp.MustCompile(`^([a-zA-Z0-9\.-]+)=(.*)`)

// containerdConfig is /etc/containerd/config.toml (containerd 2.x, version 3),
// exposed to OSPs as .ContainerRuntimeConfig.
func containerdConfig(n *NodeOptions) string {
	var w tomlWriter
	w.integer("version", 3)
	w.table("metrics")
	w.str("address", "127.0.0.1:1338")
	w.table("plugins")

	images := "io.containerd.cri.v1.images"
	w.table("plugins", images)
	w.boolean("discard_unpacked_layers", false)
	if n.PauseImage != "" {
		w.table("plugins", images, "pinned_images")
		w.str("sandbox", n.PauseImage)
	}
	w.table("plugins", images, "registry")
	w.str("config_path", containerdConfigDir)
	if len(n.RegistryCredentials) > 0 {
		// Registry keys are host[:port]; dockerconfigjson often uses URLs.
		auths := make(map[string]RegistryAuth, len(n.RegistryCredentials))
		for registry, auth := range n.RegistryCredentials {
			if u, err := url.Parse(registry); err == nil && u.Host != "" {
				registry = u.Host
			}
			auths[registry] = auth
		}
		w.table("plugins", images, "registry", "configs")
		for _, host := range sortedKeys(auths) {
			a := auths[host]
			w.table("plugins", images, "registry", "configs", host)
			w.table("plugins", images, "registry", "configs", host, "auth")
			for _, kv := range [][2]string{{"username", a.Username}, {"password", a.Password}, {"auth", a.Auth}, {"identitytoken", a.IdentityToken}} {
				if kv[1] != "" {
					w.str(kv[0], kv[1])
				}
			}
		}
	}

	runtime := "io.containerd.cri.v1.runtime"
	w.table("plugins", runtime)
	w.boolean("device_ownership_from_security_context", n.DeviceOwnershipFromSecurityContext)
	w.table("plugins", runtime, "containerd")
	w.table("plugins", runtime, "containerd", "runtimes")
	w.table("plugins", runtime, "containerd", "runtimes", "runc")
	w.str("runtime_type", "io.containerd.runc.v2")
	w.table("plugins", runtime, "containerd", "runtimes", "runc", "options")
	w.boolean("SystemdCgroup", true)
	w.table("plugins", runtime, "cni")
	w.strings("bin_dirs", "/opt/cni/bin")
	w.str("conf_dir", "/etc/cni/net.d")
	return w.String()
}

type registryEndpoint struct {
	url          string
	overridePath bool
}

type registryHosts struct {
	endpoints []registryEndpoint
	insecure  bool
}

// registryMirrors merges --node-containerd-registry-mirrors with
// --node-registry-mirrors (docker.io unless written "registry=mirror", https://
// unless a scheme is given).
func registryMirrors(n *NodeOptions) map[string][]string {
	mirrors := make(map[string][]string, len(n.ContainerdRegistryMirrors)+1)
	for registry, urls := range n.ContainerdRegistryMirrors {
		mirrors[registry] = slices.Clone(urls)
	}
	for _, m := range n.RegistryMirrors {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		registry := dockerHubRegistry
		if match := registryMirrorPattern.FindStringSubmatch(m); match != nil {
			registry, m = match[1], match[2]
		}
		if !strings.HasPrefix(m, "http") {
			m = "https://" + m
		}
		mirrors[registry] = append(mirrors[registry], m)
	}
	return mirrors
}

// registryHostFiles are the /etc/containerd/certs.d/<registry>/hosts.toml files
// for mirrors and insecure registries, sorted by path. docker.io always gets one.
func registryHostFiles(n *NodeOptions) []osm.File {
	registries := map[string]*registryHosts{
		dockerHubRegistry: {endpoints: []registryEndpoint{{url: dockerHubEndpoint}}},
	}
	for registry, urls := range registryMirrors(n) {
		r := &registryHosts{}
		for _, u := range urls {
			r.endpoints = append(r.endpoints, parseMirror(u))
		}
		registries[registry] = r
	}
	for _, registry := range n.InsecureRegistries {
		if registry = strings.TrimSpace(registry); registry == "" {
			continue
		}
		if registries[registry] == nil {
			registries[registry] = &registryHosts{}
		}
		registries[registry].insecure = true
	}

	files := make([]osm.File, 0, len(registries))
	for _, registry := range sortedKeys(registries) {
		r := registries[registry]
		if len(r.endpoints) == 0 && !r.insecure {
			continue
		}
		dir, server := registry, registry
		if i := strings.IndexByte(dir, '/'); i >= 0 {
			dir = dir[:i]
		}
		switch dir {
		case dockerHubRegistry:
			server = dockerHubEndpoint
		case "*", "_default":
			dir, server = "_default", ""
		}
		f := osm.File{
			Path:        containerdConfigDir + "/" + dir + "/hosts.toml",
			Permissions: hostsFilePerms,
			Content:     osm.FileContent{Inline: &osm.FileContentInline{Data: hostsTOML(server, r)}},
		}
		// Registries sharing a directory ("*" and "_default", a host and a path
		// under it) get one file: the last in sort order wins, as upstream.
		if i := slices.IndexFunc(files, func(g osm.File) bool { return g.Path == f.Path }); i >= 0 {
			files[i] = f
			continue
		}
		files = append(files, f)
	}
	slices.SortFunc(files, func(a, b osm.File) int { return strings.Compare(a.Path, b.Path) })
	return files
}

func hostsTOML(server string, r *registryHosts) string {
	var w tomlWriter
	if server != "" {
		w.str("server", server)
		w.b.WriteByte('\n')
	}
	endpoints := r.endpoints
	if len(endpoints) == 0 {
		endpoints = []registryEndpoint{{url: server}}
	}
	byURL := make(map[string]registryEndpoint, len(endpoints))
	for _, e := range endpoints {
		byURL[e.url] = e
	}
	for _, u := range sortedKeys(byURL) {
		w.table("host", u)
		w.strings("capabilities", "pull", "resolve")
		if r.insecure {
			w.boolean("skip_verify", true)
		}
		if byURL[u].overridePath {
			w.boolean("override_path", true)
		}
	}
	return w.String()
}

// parseMirror reads the "kubermatic=override_path%3Dtrue" side-band parameter
// of a mirror URL and strips it: containerd does not understand it.
func parseMirror(mirror string) registryEndpoint {
	e := registryEndpoint{url: mirror}
	u, err := url.Parse(mirror)
	if err != nil {
		return e
	}
	q := u.Query()
	if !q.Has("kubermatic") {
		return e
	}
	if params, err := url.ParseQuery(q.Get("kubermatic")); err == nil {
		e.overridePath, _ = strconv.ParseBool(params.Get("override_path"))
	}
	q.Del("kubermatic")
	u.RawQuery = q.Encode()
	e.url = u.String()
	return e
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
