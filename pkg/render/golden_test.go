package render

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden compares got with testdata/golden/<name>.golden, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (run with -update to accept):\n%s", name, path, got)
	}
}

func testMachineDeployment(annotations map[string]string, providerSpec string) *clusterv1alpha1.MachineDeployment {
	md := &clusterv1alpha1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "md-1", Namespace: "kube-system", Annotations: annotations},
	}
	md.Spec.Template.Spec.Versions.Kubelet = "1.31.2"
	md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(providerSpec)}
	return md
}

const awsUbuntu = `{"sshPublicKeys":["ssh-ed25519 AAAA test"],"cloudProvider":"aws","cloudProviderSpec":{"region":"eu-west-1"},"operatingSystem":"ubuntu","operatingSystemSpec":{"distUpgradeOnBoot":true},"network":{"cidr":"","gateway":"","dns":{"servers":null},"ipFamily":"IPv4+IPv6"}}`

// TestContainerRuntimeGolden covers containerd's config.toml and the certs.d
// hosts.toml files for mirrors, insecure registries and credentials.
func TestContainerRuntimeGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		node NodeOptions
	}{
		{"containerd-defaults", NodeOptions{}},
		{"containerd-pause-and-credentials", NodeOptions{
			PauseImage: "registry.example.com/pause:3.10",
			RegistryCredentials: map[string]RegistryAuth{
				"https://registry.example.com": {Username: "user", Password: `pa"ss\word`},
				"quay.io":                      {Auth: "dXNlcjpwYXNz", IdentityToken: "tok"},
			},
			DeviceOwnershipFromSecurityContext: true,
		}},
		{"containerd-mirrors-and-insecure", NodeOptions{
			InsecureRegistries: []string{"10.0.0.1:5000", " insecure.example.com "},
			RegistryMirrors:    []string{"https://registry.docker-cn.com", "mirror.example.com", "quay.io=quay-mirror.example.com"},
			ContainerdRegistryMirrors: map[string][]string{
				"ghcr.io":              {"https://harbor.example.com/v2/ghcr?kubermatic=override_path%3Dtrue", "https://harbor.example.com"},
				"insecure.example.com": {"https://mirror.insecure.example.com"},
				"gitlab.com/group":     {"https://mirror.gitlab.example.com/group"},
				"*":                    {"https://catch-all.example.com"},
			},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString("# /etc/containerd/config.toml\n")
			b.WriteString(containerdConfig(&tc.node))
			for _, f := range registryHostFiles(&tc.node) {
				fmt.Fprintf(&b, "---\n# %s (permissions %d)\n", f.Path, f.Permissions)
				b.WriteString(f.Content.Inline.Data)
			}
			golden(t, tc.name, b.String())
		})
	}
}

// TestTemplateDataGolden covers the data our own code hands to templates:
// kubelet knobs from annotations, node options, bootstrap names and the named
// template semantics, through a small OSP of our own.
func TestTemplateDataGolden(t *testing.T) {
	osp, err := DecodeOSP(mustRead(t, filepath.Join("testdata", "osp-golden.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		node        NodeOptions
	}{
		{"data-defaults", nil, NodeOptions{ClusterDNSIPs: []string{"10.10.10.10"}, ContainerRuntime: "containerd"}},
		{"data-kubelet-annotations", map[string]string{
			machinecontroller.KubeletConfigAnnotationPrefix + "KubeReserved":                "cpu=300m,memory=1Gi",
			machinecontroller.KubeletConfigAnnotationPrefix + "SystemReserved":              "cpu=100m,bogus",
			machinecontroller.KubeletConfigAnnotationPrefix + "EvictionHard":                "memory.available<500Mi,nodefs.available<5%",
			machinecontroller.KubeletConfigAnnotationPrefix + "MaxPods":                     "220",
			machinecontroller.KubeletConfigAnnotationPrefix + "ContainerLogMaxSize":         "50Mi",
			machinecontroller.KubeletConfigAnnotationPrefix + "ContainerLogMaxFiles":        "3",
			machinecontroller.KubeletConfigAnnotationPrefix + "ImageGCHighThresholdPercent": "85",
			machinecontroller.KubeletConfigAnnotationPrefix + "ImageGCLowThresholdPercent":  "70",
			machinecontroller.KubeletConfigAnnotationPrefix + "ImageMinimumGCAge":           "5m",
			machinecontroller.KubeletConfigAnnotationPrefix + "ImageMaximumGCAge":           "168h",
		}, NodeOptions{
			ClusterDNSIPs: []string{"10.0.0.10", "fd00::10"}, ContainerRuntime: "containerd",
			ExternalCloudProvider: true, InitialTaints: "dedicated=gpu:NoSchedule",
			HTTPProxy: "http://proxy:3128", NoProxy: "10.0.0.0/8", PauseImage: "reg/pause:3.10",
			KubeletFeatureGates: map[string]bool{"B": false, "A": true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{
				OSP:               osp,
				MachineDeployment: testMachineDeployment(tc.annotations, awsUbuntu),
				Cluster:           ClusterInfo{ServerURL: "https://api.example.com:6443", CACert: "CA", BootstrapToken: "abc.def", CloudInitGetterToken: "getter"},
				Node:              tc.node,
			}
			res, err := NewRenderer().Render(in)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, c := range []struct {
				kind  string
				files []string
			}{{"bootstrap", nil}, {"provisioning", nil}} {
				cfg := res.Config.BootstrapConfig
				if c.kind == "provisioning" {
					cfg = res.Config.ProvisioningConfig
				}
				for _, f := range cfg.Files {
					if strings.HasPrefix(f.Path, "/etc/golden/") {
						b.WriteString("# " + c.kind + " " + f.Path + "\n" + f.Content.Inline.Data)
					}
				}
			}
			golden(t, tc.name, b.String())
		})
	}
}

func TestKubeletAnnotationErrors(t *testing.T) {
	for knob, value := range map[string]string{"MaxPods": "many", "ImageMinimumGCAge": "5 minutes", "ImageGCHighThresholdPercent": "99999999999"} {
		d := &templateData{}
		err := setKubeletSettings(d, map[string]string{machinecontroller.KubeletConfigAnnotationPrefix + knob: value})
		if err == nil || !strings.Contains(err.Error(), "annotation "+machinecontroller.KubeletConfigAnnotationPrefix+knob+": invalid") {
			t.Errorf("%s=%s: error %v", knob, value, err)
		}
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
