package render_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// upstreamDir is ../shared/upstream-osm beside the repository root, where
// developers and CI keep the upstream project's OSPs and rendered cases.
func upstreamDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	up := filepath.Join(filepath.Dir(dir), "shared", "upstream-osm")
	if _, err := os.Stat(up); err != nil {
		t.Skipf("../shared/upstream-osm is missing beside the repository root (%s): upstream cases cannot run", up)
	}
	return up
}

// caseInput is the render input a case's args describe. The args are those of
// `osm-apiserver render`; cmd/osm-apiserver/app renders the cases through the
// command itself. This package does not import the command line, so it reads
// them with its own copy of the node and cluster flags the cases use, with the
// command's defaults and parsing: a flag no case used before fails the parse
// and belongs here.
func caseInput(t testing.TB, caseDir string) render.Input {
	t.Helper()
	args, err := readArgs(filepath.Join(caseDir, "args"))
	if err != nil {
		t.Fatal(err)
	}
	var ospPath, mdPath string
	var f caseFlags
	fs := pflag.NewFlagSet("case", pflag.ContinueOnError)
	fs.StringVar(&ospPath, "osp", "", "")
	fs.StringVar(&mdPath, "machinedeployment", "", "")
	f.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("args: %v", err)
	}
	for _, p := range []*string{&ospPath, &mdPath, &f.clusterInfoKubeconfig, &f.kubernetesCABundle, &f.hostCABundle} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(caseDir, *p)
		}
	}
	in := render.Input{Node: f.nodeOptions(t), Cluster: f.clusterInfo(t)}
	in.OSP = decodeFile(t, ospPath, render.DecodeOSP)
	in.MachineDeployment = decodeFile(t, mdPath, render.DecodeMachineDeployment)
	return in
}

// caseFlags are the node and cluster flags of `osm-apiserver render` that the
// upstream cases use, with the command's defaults.
type caseFlags struct {
	clusterDNS, containerRuntime                       string
	externalCloudProvider                              bool
	initialTaints, httpProxy, noProxy, pauseImage      string
	insecureRegistries, registryMirrors, featureGates  string
	clusterInfoKubeconfig, kubernetesCABundle          string
	hostCABundle, bootstrapToken, cloudInitGetterToken string
}

func (f *caseFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.clusterDNS, "cluster-dns", "10.10.10.10", "")
	fs.StringVar(&f.containerRuntime, "container-runtime", "containerd", "")
	fs.BoolVar(&f.externalCloudProvider, "external-cloud-provider", false, "")
	fs.StringVar(&f.initialTaints, "initial-taints", "", "")
	fs.StringVar(&f.httpProxy, "node-http-proxy", "", "")
	fs.StringVar(&f.noProxy, "node-no-proxy", "", "")
	fs.StringVar(&f.insecureRegistries, "node-insecure-registries", "", "")
	fs.StringVar(&f.registryMirrors, "node-registry-mirrors", "", "")
	fs.StringVar(&f.pauseImage, "pause-image", "", "")
	fs.StringVar(&f.featureGates, "node-kubelet-feature-gates", "RotateKubeletServerCertificate=true", "")
	fs.StringVar(&f.clusterInfoKubeconfig, "cluster-info-kubeconfig", "", "")
	fs.StringVar(&f.kubernetesCABundle, "kubernetes-ca-bundle", "", "")
	fs.StringVar(&f.hostCABundle, "host-ca-bundle", "", "")
	fs.StringVar(&f.bootstrapToken, "bootstrap-token", "", "")
	fs.StringVar(&f.cloudInitGetterToken, "cloud-init-getter-token", "", "")
}

// nodeOptions parses the node flags as the command does; the cases hold valid
// values, so it checks only what the parse needs.
func (f *caseFlags) nodeOptions(t testing.TB) render.NodeOptions {
	t.Helper()
	o := render.NodeOptions{
		ClusterDNSIPs:         caseSplitList(f.clusterDNS),
		ContainerRuntime:      f.containerRuntime,
		ExternalCloudProvider: f.externalCloudProvider,
		InitialTaints:         strings.TrimSpace(f.initialTaints),
		HTTPProxy:             strings.TrimSpace(f.httpProxy),
		NoProxy:               strings.TrimSpace(f.noProxy),
		PauseImage:            strings.TrimSpace(f.pauseImage),
		InsecureRegistries:    caseSplitList(f.insecureRegistries),
		RegistryMirrors:       caseSplitList(f.registryMirrors),
	}
	for _, kv := range caseSplitList(f.featureGates) {
		k, v, _ := strings.Cut(kv, "=")
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			t.Fatalf("--node-kubelet-feature-gates %q: %v", kv, err)
		}
		if o.KubeletFeatureGates == nil {
			o.KubeletFeatureGates = map[string]bool{}
		}
		o.KubeletFeatureGates[strings.TrimSpace(k)] = b
	}
	return o
}

// clusterInfo reads the files the cluster flags name, as the command does.
func (f *caseFlags) clusterInfo(t testing.TB) render.ClusterInfo {
	t.Helper()
	c := render.ClusterInfo{BootstrapToken: f.bootstrapToken, CloudInitGetterToken: f.cloudInitGetterToken}
	if f.clusterInfoKubeconfig != "" {
		cfg, err := clientcmd.LoadFromFile(f.clusterInfoKubeconfig)
		if err != nil || len(cfg.Clusters) != 1 {
			t.Fatalf("--cluster-info-kubeconfig %s: want one cluster: %v", f.clusterInfoKubeconfig, err)
		}
		for _, cluster := range cfg.Clusters {
			c.ServerURL, c.CACert = cluster.Server, string(cluster.CertificateAuthorityData)
		}
	}
	for _, pem := range []struct {
		path string
		into *string
	}{{f.kubernetesCABundle, &c.KubernetesCACert}, {f.hostCABundle, &c.HostCACert}} {
		if pem.path != "" {
			*pem.into = string(readCaseFile(t, pem.path))
		}
	}
	return c
}

// caseSplitList splits a comma-separated flag value, trimming blanks and dropping
// empty items, as the command does.
func caseSplitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func readCaseFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func decodeFile[T any](t testing.TB, path string, decode func([]byte) (T, error)) T {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := decode(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// readArgs reads an args file: one argv entry per line.
func readArgs(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var args []string
	for _, line := range splitLines(string(data)) {
		if line != "" {
			args = append(args, line)
		}
	}
	return args, nil
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
