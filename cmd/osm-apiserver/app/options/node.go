package options

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// NodeFlags are the flags that configure every node's container runtime,
// kubelet and proxy. Values are parsed and validated by NodeOptions.
type NodeFlags struct {
	ClusterDNS                string
	ContainerRuntime          string
	ExternalCloudProvider     bool
	InitialTaints             string
	HTTPProxy                 string
	NoProxy                   string
	InsecureRegistries        string
	RegistryMirrors           string
	ContainerdRegistryMirrors []string
	RegistryCredentialsSecret string
	PauseImage                string
	KubeletFeatureGates       string

	// RegistryCredentialsFromFile makes --node-registry-credentials-secret a
	// path to a Secret manifest instead of namespace/name (offline render).
	RegistryCredentialsFromFile bool
}

// NewNodeFlags returns NodeFlags with the defaults of the upstream project.
func NewNodeFlags() *NodeFlags {
	return &NodeFlags{
		ClusterDNS:          "10.10.10.10",
		ContainerRuntime:    "containerd",
		KubeletFeatureGates: "RotateKubeletServerCertificate=true",
	}
}

// AddFlags registers the node flags on fs.
func (f *NodeFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.ClusterDNS, "cluster-dns", f.ClusterDNS, "Comma-separated IPs of the cluster DNS service, for the kubelet.")
	fs.StringVar(&f.ContainerRuntime, "container-runtime", f.ContainerRuntime, "Container runtime of the nodes (containerd).")
	fs.BoolVar(&f.ExternalCloudProvider, "external-cloud-provider", f.ExternalCloudProvider, "Run the kubelet with --cloud-provider=external.")
	fs.StringVar(&f.InitialTaints, "initial-taints", f.InitialTaints, "Taints the kubelet registers the node with, key=value:Effect,...")
	fs.StringVar(&f.HTTPProxy, "node-http-proxy", f.HTTPProxy, "HTTP(S) proxy of the nodes.")
	fs.StringVar(&f.NoProxy, "node-no-proxy", f.NoProxy, "NO_PROXY of the nodes.")
	fs.StringVar(&f.InsecureRegistries, "node-insecure-registries", f.InsecureRegistries, "Comma-separated registries (host[:port]) the container runtime reaches without TLS verification.")
	fs.StringVar(&f.RegistryMirrors, "node-registry-mirrors", f.RegistryMirrors, "Comma-separated mirrors of docker.io; registry=mirror mirrors another registry.")
	fs.StringArrayVar(&f.ContainerdRegistryMirrors, "node-containerd-registry-mirrors", f.ContainerdRegistryMirrors, "Mirror of a registry for containerd, registry=mirror-url; repeatable.")
	fs.StringVar(&f.RegistryCredentialsSecret, "node-registry-credentials-secret", f.RegistryCredentialsSecret, "Registry credentials for containerd: namespace/name of a Secret (kubernetes.io/dockerconfigjson, or one JSON auth per registry key); `render` takes the path of such a Secret manifest instead.")
	fs.StringVar(&f.PauseImage, "pause-image", f.PauseImage, "Sandbox (pause) image of the container runtime.")
	fs.StringVar(&f.KubeletFeatureGates, "node-kubelet-feature-gates", f.KubeletFeatureGates, "Kubelet feature gates, Name=true|false,...")
}

// registryMirrorArg is a "registry=mirror" item of --node-registry-mirrors.
var registryMirrorArg = regexp.MustCompile(`^([a-zA-Z0-9.-]+)=(.*)`)

// mirrorArg is one --node-containerd-registry-mirrors value. Like upstream it
// splits at the first "=", so registry names may have a path ("host/library").
var mirrorArg = regexp.MustCompile(`^([^=\s]+)=(.+)$`)

// NodeOptions parses and validates the flags. With RegistryCredentialsFromFile
// it reads the credentials Secret manifest; otherwise RegistryCredentials stays
// empty and the caller resolves RegistryCredentialsSecretRef.
func (f *NodeFlags) NodeOptions() (render.NodeOptions, error) {
	o := render.NodeOptions{
		ContainerRuntime:      f.ContainerRuntime,
		ExternalCloudProvider: f.ExternalCloudProvider,
		InitialTaints:         strings.TrimSpace(f.InitialTaints),
		HTTPProxy:             strings.TrimSpace(f.HTTPProxy),
		NoProxy:               strings.TrimSpace(f.NoProxy),
		PauseImage:            strings.TrimSpace(f.PauseImage),
	}
	if o.ContainerRuntime != "containerd" {
		return o, fmt.Errorf("--container-runtime: %q is not supported, only containerd", f.ContainerRuntime)
	}
	for _, ip := range splitList(f.ClusterDNS) {
		if net.ParseIP(ip) == nil {
			return o, fmt.Errorf("--cluster-dns: %q is not an IP address", ip)
		}
		o.ClusterDNSIPs = append(o.ClusterDNSIPs, ip)
	}
	if len(o.ClusterDNSIPs) == 0 {
		return o, fmt.Errorf("--cluster-dns: at least one IP address is required")
	}
	if o.HTTPProxy != "" {
		if _, err := url.Parse(o.HTTPProxy); err != nil {
			return o, fmt.Errorf("--node-http-proxy: %q is not a URL", o.HTTPProxy)
		}
	}
	o.InsecureRegistries = splitList(f.InsecureRegistries)
	for _, m := range splitList(f.RegistryMirrors) {
		target := m
		if match := registryMirrorArg.FindStringSubmatch(m); match != nil {
			target = match[2]
		}
		if !strings.HasPrefix(target, "http") {
			target = "https://" + target
		}
		if _, err := url.Parse(target); err != nil {
			return o, fmt.Errorf("--node-registry-mirrors: %q is not a URL", m)
		}
		o.RegistryMirrors = append(o.RegistryMirrors, m)
	}
	for _, m := range f.ContainerdRegistryMirrors {
		match := mirrorArg.FindStringSubmatch(strings.TrimSpace(m))
		if match == nil {
			return o, fmt.Errorf("--node-containerd-registry-mirrors: %q is not registry=mirror", m)
		}
		if o.ContainerdRegistryMirrors == nil {
			o.ContainerdRegistryMirrors = map[string][]string{}
		}
		o.ContainerdRegistryMirrors[match[1]] = append(o.ContainerdRegistryMirrors[match[1]], match[2])
	}
	gates, err := parseFeatureGates(f.KubeletFeatureGates)
	if err != nil {
		return o, err
	}
	o.KubeletFeatureGates = gates
	if f.RegistryCredentialsSecret != "" {
		if f.RegistryCredentialsFromFile {
			data, err := os.ReadFile(f.RegistryCredentialsSecret)
			if err != nil {
				return o, fmt.Errorf("--node-registry-credentials-secret: %w", err)
			}
			if o.RegistryCredentials, err = facts.RegistryCredentialsFromManifest(data); err != nil {
				return o, fmt.Errorf("--node-registry-credentials-secret %s: %w", f.RegistryCredentialsSecret, err)
			}
		} else if _, err := f.RegistryCredentialsSecretRef(); err != nil {
			return o, err
		}
	}
	return o, nil
}

// RegistryCredentialsSecretRef is the namespace and name of the credentials
// Secret; empty when the flag is not set.
func (f *NodeFlags) RegistryCredentialsSecretRef() (cache.ObjectName, error) {
	if f.RegistryCredentialsSecret == "" {
		return cache.ObjectName{}, nil
	}
	ns, n, ok := strings.Cut(f.RegistryCredentialsSecret, "/")
	if !ok || ns == "" || n == "" || strings.Contains(n, "/") {
		return cache.ObjectName{}, fmt.Errorf("--node-registry-credentials-secret: %q is not namespace/name", f.RegistryCredentialsSecret)
	}
	return cache.ObjectName{Namespace: ns, Name: n}, nil
}

func parseFeatureGates(s string) (map[string]bool, error) {
	var gates map[string]bool
	for _, kv := range splitList(s) {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("--node-kubelet-feature-gates: %q is not Name=true|false", kv)
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("--node-kubelet-feature-gates: %q: value %q is not true or false", k, v)
		}
		if gates == nil {
			gates = map[string]bool{}
		}
		gates[k] = b
	}
	return gates, nil
}

// splitList splits a comma-separated flag value, trimming blanks and dropping empty items.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
