package options

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testCA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

func TestClusterInfo(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	kubeconfig := write("cluster-info", `apiVersion: v1
kind: Config
clusters:
- name: ""
  cluster:
    server: https://foo.bar:6443
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=
`)
	noCA := write("no-ca", "apiVersion: v1\nkind: Config\nclusters:\n- name: a\n  cluster: {server: https://x}\n")
	ca := write("ca.crt", testCA)
	notPEM := write("not-pem", "hello")

	good := ClusterFlags{ClusterInfoKubeconfig: kubeconfig, BootstrapToken: "abcdef.0123456789abcdef", CloudInitGetterToken: "tok", KubernetesCABundle: ca}
	c, err := good.ClusterInfo()
	if err != nil {
		t.Fatal(err)
	}
	if c.ServerURL != "https://foo.bar:6443" || c.CACert != testCA || c.KubernetesCACert != testCA || c.BootstrapToken != good.BootstrapToken || c.CloudInitGetterToken != "tok" {
		t.Errorf("unexpected %+v", c)
	}

	for _, tc := range []struct {
		name   string
		modify func(f *ClusterFlags)
		want   string
	}{
		{"kubeconfig without CA", func(f *ClusterFlags) { f.ClusterInfoKubeconfig = noCA }, "--cluster-info-kubeconfig " + noCA + ": the cluster has no certificate-authority-data"},
		{"bad token", func(f *ClusterFlags) { f.BootstrapToken = "abcdef" }, "--bootstrap-token: not of the form ID.SECRET"},
		{"CA bundle not PEM", func(f *ClusterFlags) { f.KubernetesCABundle = notPEM }, "--kubernetes-ca-bundle " + notPEM + ": no PEM block"},
		{"missing host CA", func(f *ClusterFlags) { f.HostCABundle = filepath.Join(dir, "nope") }, "--host-ca-bundle: open " + filepath.Join(dir, "nope") + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := good
			tc.modify(&f)
			_, err := f.ClusterInfo()
			if err == nil || err.Error() != tc.want || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// Without a cluster-info kubeconfig (the server finds the URL and CA in the
// cluster) the rest is read and checked the same way.
func TestClusterInfoWithoutKubeconfig(t *testing.T) {
	c, err := (&ClusterFlags{BootstrapToken: "abcdef.0123456789abcdef", CloudInitGetterToken: "tok"}).ClusterInfo()
	if err != nil || c.BootstrapToken != "abcdef.0123456789abcdef" || c.CloudInitGetterToken != "tok" || c.ServerURL != "" {
		t.Errorf("ClusterInfo() = %+v, %v", c, err)
	}
	if _, err := (&ClusterFlags{BootstrapToken: "abcdef"}).ClusterInfo(); err == nil || err.Error() != "--bootstrap-token: not of the form ID.SECRET" {
		t.Errorf("bad token: error %v", err)
	}
}

// --node-api-server replaces the server of --cluster-info-kubeconfig and is
// checked.
func TestNodeAPIServerFlag(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "cluster-info")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: ""
  cluster:
    server: https://foo.bar:6443
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=
`), 0o600); err != nil {
		t.Fatal(err)
	}
	f := ClusterFlags{ClusterInfoKubeconfig: kubeconfig, NodeAPIServer: "https://nodes.example:6443"}
	if c, err := f.ClusterInfo(); err != nil || c.ServerURL != "https://nodes.example:6443" || c.CACert != testCA {
		t.Errorf("got %+v, %v", c, err)
	}
	f.NodeAPIServer = "http://nodes.example:6443"
	if _, err := f.ClusterInfo(); err == nil || !strings.Contains(err.Error(), "--node-api-server") {
		t.Errorf("err %v, want --node-api-server named", err)
	}
	o := NewOptions()
	o.Cluster.NodeAPIServer = "nodes.example:6443"
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--node-api-server") {
		t.Errorf("Validate: %v, want --node-api-server named", err)
	}
}

// The worker cluster's server is the kubernetes Service without kubeconfigs,
// or when a kubeconfig names the Service's ClusterIP.
func TestInCluster(t *testing.T) {
	for _, c := range []struct {
		kubeconfig, worker, server, serviceHost string
		want                                    bool
	}{
		{"", "", "https://10.96.0.1:443", "10.96.0.1", true},
		{"/kc", "", "https://10.96.0.1:443", "10.96.0.1", true},
		{"/kc", "", "https://203.0.113.5:6443", "10.96.0.1", false},
		{"", "/worker", "https://203.0.113.5:6443", "", false},
		{"/kc", "", "https://10.96.0.1:443", "", false}, // not in a pod
	} {
		if got := inCluster(c.kubeconfig, c.worker, c.server, c.serviceHost); got != c.want {
			t.Errorf("%+v: %v, want %v", c, got, c.want)
		}
	}
}
