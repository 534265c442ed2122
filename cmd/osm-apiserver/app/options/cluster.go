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
	NodeAPIServer         string
	BootstrapToken        string
	CloudInitGetterToken  string
	KubernetesCABundle    string
	HostCABundle          string
}

// AddFlags registers the cluster flags on fs.
func (f *ClusterFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.ClusterInfoKubeconfig, "cluster-info-kubeconfig", f.ClusterInfoKubeconfig, "Kubeconfig like kube-public/cluster-info: the API server URL and CA as nodes reach them. The server reads kube-public/cluster-info of the worker cluster when it is not set.")
	fs.StringVar(&f.NodeAPIServer, "node-api-server", f.NodeAPIServer, "API server URL nodes are given, https://host[:port], whatever the cluster says. Without it: the server of kube-public/cluster-info (or --cluster-info-kubeconfig), else an endpoint of kube-apiserver from the EndpointSlices of default/kubernetes, else the server of the kubeconfig unless it is an in-cluster Service address.")
	fs.StringVar(&f.KubernetesCABundle, "kubernetes-ca-bundle", f.KubernetesCABundle, "PEM file written as the cluster CA on nodes; default: the CA of --cluster-info-kubeconfig.")
	fs.StringVar(&f.HostCABundle, "host-ca-bundle", f.HostCABundle, "PEM file of extra CAs the nodes' hosts trust.")
}

// AddTokenFlags registers the token flags of `render` on fs.
func (f *ClusterFlags) AddTokenFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.BootstrapToken, "bootstrap-token", f.BootstrapToken, "Kubelet TLS-bootstrap token, ID.SECRET.")
	fs.StringVar(&f.CloudInitGetterToken, "cloud-init-getter-token", f.CloudInitGetterToken, "Bearer token the bootstrap payload uses to fetch its provisioning Secret.")
}

// ClusterInfo reads the files the flags name and checks the tokens' form.
// Without --cluster-info-kubeconfig the CA stays empty, and the API server
// URL too unless --node-api-server sets it.
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
	if f.NodeAPIServer != "" {
		if err := facts.ValidateNodeAPIServer(f.NodeAPIServer); err != nil {
			return c, fmt.Errorf("--node-api-server: %w", err)
		}
		c.ServerURL = f.NodeAPIServer
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
