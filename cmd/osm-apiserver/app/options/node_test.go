package options

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

func parseNodeFlags(t *testing.T, args ...string) *NodeFlags {
	t.Helper()
	f := NewNodeFlags()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return f
}

func TestNodeOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want func(o *render.NodeOptions)
	}{
		{"defaults", nil, func(o *render.NodeOptions) {}},
		{"upstream case flags", []string{
			"--cluster-dns", "10.0.0.0", "--external-cloud-provider",
			"--node-http-proxy", "http://test-http-proxy.com", "--node-no-proxy", "http://test-no-proxy.com",
			"--node-insecure-registries", "192.168.100.100:5000, 10.0.0.1:5000",
			"--node-registry-mirrors", "https://registry.docker-cn.com",
			"--pause-image", "192.168.100.100:5000/kubernetes/pause:v3.1",
			"--node-kubelet-feature-gates", "GracefulNodeShutdown=true,IdentifyPodOS=false",
		}, func(o *render.NodeOptions) {
			o.ClusterDNSIPs = []string{"10.0.0.0"}
			o.ExternalCloudProvider = true
			o.HTTPProxy, o.NoProxy = "http://test-http-proxy.com", "http://test-no-proxy.com"
			o.InsecureRegistries = []string{"192.168.100.100:5000", "10.0.0.1:5000"}
			o.RegistryMirrors = []string{"https://registry.docker-cn.com"}
			o.PauseImage = "192.168.100.100:5000/kubernetes/pause:v3.1"
			o.KubeletFeatureGates = map[string]bool{"GracefulNodeShutdown": true, "IdentifyPodOS": false}
		}},
		{"several DNS IPs and taints", []string{"--cluster-dns", "10.0.0.10, fd00::a", "--initial-taints", "dedicated=gpu:NoSchedule"}, func(o *render.NodeOptions) {
			o.ClusterDNSIPs = []string{"10.0.0.10", "fd00::a"}
			o.InitialTaints = "dedicated=gpu:NoSchedule"
		}},
		{"containerd mirrors repeat", []string{
			"--node-containerd-registry-mirrors", "quay.io=https://mirror.example.com",
			"--node-containerd-registry-mirrors", "quay.io=https://harbor.example.com/v2/quay?kubermatic=override_path%3Dtrue",
			"--node-containerd-registry-mirrors", "ghcr.io=mirror.example.com",
		}, func(o *render.NodeOptions) {
			o.ContainerdRegistryMirrors = map[string][]string{
				"quay.io": {"https://mirror.example.com", "https://harbor.example.com/v2/quay?kubermatic=override_path%3Dtrue"},
				"ghcr.io": {"mirror.example.com"},
			}
		}},
		{"containerd mirror of a registry subpath", []string{
			// Upstream splits at the first "=": registry names may carry a path,
			// which hosts.toml placement strips to host[:port].
			"--node-containerd-registry-mirrors", "registry.example.com:5000/library=https://mirror.example.com/v2/library?kubermatic=override_path%3Dtrue",
		}, func(o *render.NodeOptions) {
			o.ContainerdRegistryMirrors = map[string][]string{
				"registry.example.com:5000/library": {"https://mirror.example.com/v2/library?kubermatic=override_path%3Dtrue"},
			}
		}},
		{"no feature gates", []string{"--node-kubelet-feature-gates", ""}, func(o *render.NodeOptions) { o.KubeletFeatureGates = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseNodeFlags(t, tc.args...).NodeOptions()
			if err != nil {
				t.Fatal(err)
			}
			want := render.NodeOptions{
				ClusterDNSIPs:       []string{"10.10.10.10"},
				ContainerRuntime:    "containerd",
				KubeletFeatureGates: map[string]bool{"RotateKubeletServerCertificate": true},
			}
			tc.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestNodeOptionsErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cluster-dns", "10.0.0.300"}, `--cluster-dns: "10.0.0.300" is not an IP address`},
		{[]string{"--cluster-dns", " , "}, "--cluster-dns: at least one IP address is required"},
		{[]string{"--container-runtime", "docker"}, `--container-runtime: "docker" is not supported, only containerd`},
		{[]string{"--node-kubelet-feature-gates", "Foo"}, `--node-kubelet-feature-gates: "Foo" is not Name=true|false`},
		{[]string{"--node-kubelet-feature-gates", "Foo=yes please"}, `--node-kubelet-feature-gates: "Foo": value "yes please" is not true or false`},
		{[]string{"--node-containerd-registry-mirrors", "https://mirror.example.com"}, `--node-containerd-registry-mirrors: "https://mirror.example.com" is not registry=mirror`},
		{[]string{"--node-registry-mirrors", "docker.io=http://%zz"}, `--node-registry-mirrors: "docker.io=http://%zz" is not a URL`},
		{[]string{"--node-registry-credentials-secret", "just-a-name"}, `--node-registry-credentials-secret: "just-a-name" is not namespace/name`},
		{[]string{"--node-http-proxy", "http://%zz"}, `--node-http-proxy: "http://%zz" is not a URL`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := parseNodeFlags(t, tc.args...).NodeOptions()
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestRegistryCredentialsFromFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dockerCfg := write("docker.yaml", `apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: kube-system}
type: kubernetes.io/dockerconfigjson
stringData:
  .dockerconfigjson: '{"auths":{"https://registry.example.com":{"username":"u","password":"p"}}}'
`)
	opaque := write("opaque.yaml", `apiVersion: v1
kind: Secret
metadata: {name: creds}
data:
  quay.io: eyJhdXRoIjoiZFRwdyJ9
`)
	notSecret := write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")

	for _, tc := range []struct {
		name, path string
		want       map[string]render.RegistryAuth
		wantErr    string
	}{
		{"dockerconfigjson", dockerCfg, map[string]render.RegistryAuth{"https://registry.example.com": {Username: "u", Password: "p"}}, ""},
		{"opaque, one auth per key", opaque, map[string]render.RegistryAuth{"quay.io": {Auth: "dTpw"}}, ""},
		{"not a Secret", notSecret, nil, "--node-registry-credentials-secret " + notSecret + `: kind is "ConfigMap", not Secret`},
		{"missing file", filepath.Join(dir, "nope.yaml"), nil, "--node-registry-credentials-secret: open " + filepath.Join(dir, "nope.yaml") + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := parseNodeFlags(t, "--node-registry-credentials-secret", tc.path)
			f.RegistryCredentialsFromFile = true
			o, err := f.NodeOptions()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(o.RegistryCredentials, tc.want) {
				t.Errorf("got %+v, want %+v", o.RegistryCredentials, tc.want)
			}
		})
	}
}
