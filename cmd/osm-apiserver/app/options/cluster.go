package options

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// ClusterFlags say which cluster nodes join and, for `render`, with which tokens
// (the server keeps tokens per MachineDeployment).
type ClusterFlags struct {
	ClusterInfoKubeconfig string
	BootstrapToken        string
	CloudInitGetterToken  string
	KubernetesCABundle    string
	HostCABundle          string
}

// AddFlags registers the cluster flags on fs.
func (f *ClusterFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.ClusterInfoKubeconfig, "cluster-info-kubeconfig", f.ClusterInfoKubeconfig, "Kubeconfig like kube-public/cluster-info: the API server URL and CA as nodes reach them. The server reads kube-public/cluster-info of the worker cluster when it is not set.")
	fs.StringVar(&f.KubernetesCABundle, "kubernetes-ca-bundle", f.KubernetesCABundle, "PEM file written as the cluster CA on nodes; default: the CA of --cluster-info-kubeconfig.")
	fs.StringVar(&f.HostCABundle, "host-ca-bundle", f.HostCABundle, "PEM file of extra CAs the nodes' hosts trust.")
}

// AddTokenFlags registers the token flags of `render` on fs.
func (f *ClusterFlags) AddTokenFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.BootstrapToken, "bootstrap-token", f.BootstrapToken, "Kubelet TLS-bootstrap token, ID.SECRET.")
	fs.StringVar(&f.CloudInitGetterToken, "cloud-init-getter-token", f.CloudInitGetterToken, "Bearer token the bootstrap payload uses to fetch its provisioning Secret.")
}

// ClusterInfo reads the files the flags name and checks the tokens' form.
// Without --cluster-info-kubeconfig the API server URL and CA stay empty.
func (f *ClusterFlags) ClusterInfo() (render.ClusterInfo, error) {
	var c render.ClusterInfo
	if f.ClusterInfoKubeconfig != "" {
		data, err := os.ReadFile(f.ClusterInfoKubeconfig)
		if err != nil {
			return c, fmt.Errorf("--cluster-info-kubeconfig: %w", err)
		}
		if c.ServerURL, c.CACert, err = facts.ServerAndCA(data); err != nil {
			return c, fmt.Errorf("--cluster-info-kubeconfig %s: %w", f.ClusterInfoKubeconfig, err)
		}
	}
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
