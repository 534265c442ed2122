package options

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// ClusterFlags say which cluster nodes join and with which tokens.
type ClusterFlags struct {
	ClusterInfoKubeconfig string
	BootstrapToken        string
	CloudInitGetterToken  string
	KubernetesCABundle    string
	HostCABundle          string
}

// AddFlags registers the cluster flags on fs.
func (f *ClusterFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.ClusterInfoKubeconfig, "cluster-info-kubeconfig", f.ClusterInfoKubeconfig, "Kubeconfig like kube-public/cluster-info: the API server URL and CA as nodes reach them.")
	fs.StringVar(&f.BootstrapToken, "bootstrap-token", f.BootstrapToken, "Kubelet TLS-bootstrap token, ID.SECRET.")
	fs.StringVar(&f.CloudInitGetterToken, "cloud-init-getter-token", f.CloudInitGetterToken, "Bearer token the bootstrap payload uses to fetch its provisioning Secret.")
	fs.StringVar(&f.KubernetesCABundle, "kubernetes-ca-bundle", f.KubernetesCABundle, "PEM file written as the cluster CA on nodes; default: the CA of --cluster-info-kubeconfig.")
	fs.StringVar(&f.HostCABundle, "host-ca-bundle", f.HostCABundle, "PEM file of extra CAs the nodes' hosts trust.")
}

// ClusterInfo reads the files the flags name and checks the tokens' form.
// --cluster-info-kubeconfig is required; the tokens are checked when set.
func (f *ClusterFlags) ClusterInfo() (render.ClusterInfo, error) {
	if f.ClusterInfoKubeconfig == "" {
		return render.ClusterInfo{}, errors.New("--cluster-info-kubeconfig is required")
	}
	data, err := os.ReadFile(f.ClusterInfoKubeconfig)
	if err != nil {
		return render.ClusterInfo{}, fmt.Errorf("--cluster-info-kubeconfig: %w", err)
	}
	server, ca, err := ServerAndCA(data)
	if err != nil {
		return render.ClusterInfo{}, fmt.Errorf("--cluster-info-kubeconfig %s: %w", f.ClusterInfoKubeconfig, err)
	}
	c, err := f.Credentials()
	c.ServerURL, c.CACert = server, ca
	return c, err
}

// Credentials reads everything but the API server's URL and CA: the tokens
// (checked when set) and the CA bundles. The server uses it when it finds the
// URL and CA in the cluster instead of in --cluster-info-kubeconfig.
func (f *ClusterFlags) Credentials() (render.ClusterInfo, error) {
	var c render.ClusterInfo
	if f.BootstrapToken != "" {
		if id, secret, ok := strings.Cut(f.BootstrapToken, "."); !ok || id == "" || secret == "" {
			return c, errors.New("--bootstrap-token: not of the form ID.SECRET")
		}
	}
	c.BootstrapToken = f.BootstrapToken
	c.CloudInitGetterToken = f.CloudInitGetterToken
	var err error
	if c.KubernetesCACert, err = readPEM("--kubernetes-ca-bundle", f.KubernetesCABundle); err != nil {
		return c, err
	}
	if c.HostCACert, err = readPEM("--host-ca-bundle", f.HostCABundle); err != nil {
		return c, err
	}
	return c, nil
}

// ServerAndCA returns the server URL and CA PEM of a cluster-info kubeconfig,
// which holds exactly one cluster.
func ServerAndCA(kubeconfig []byte) (server, caPEM string, err error) {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return "", "", fmt.Errorf("not a kubeconfig: %w", err)
	}
	if len(cfg.Clusters) != 1 {
		return "", "", fmt.Errorf("want exactly one cluster, found %d", len(cfg.Clusters))
	}
	for _, cluster := range cfg.Clusters {
		server, caPEM = cluster.Server, string(cluster.CertificateAuthorityData)
	}
	if server == "" {
		return "", "", errors.New("the cluster has no server URL")
	}
	if caPEM == "" {
		return "", "", errors.New("the cluster has no certificate-authority-data")
	}
	return server, caPEM, nil
}

func readPEM(flag, path string) (string, error) {
	if path == "" {
		return "", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	if !strings.Contains(string(data), "-----BEGIN") {
		return "", fmt.Errorf("%s %s: no PEM block", flag, path)
	}
	return string(data), nil
}
