package facts

import (
	"errors"
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
)

// ClusterInfoName is the ConfigMap in kube-public that kubeadm publishes.
const ClusterInfoName = "cluster-info"

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
