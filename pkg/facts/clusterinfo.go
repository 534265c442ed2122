package facts

import (
	"errors"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
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

// serverAndCAOf returns the API server URL and CA nodes use: those of cm, the
// kube-public/cluster-info ConfigMap, or, when there is none, those of the
// client configuration.
func serverAndCAOf(cm *corev1.ConfigMap, config *rest.Config) (server, ca string, err error) {
	if cm != nil {
		server, ca, err := ServerAndCA([]byte(cm.Data["kubeconfig"]))
		if err != nil {
			return "", "", fmt.Errorf("configmap kube-public/cluster-info: %w", err)
		}
		return server, ca, nil
	}
	caData := config.CAData
	if len(caData) == 0 && config.CAFile != "" {
		if caData, err = os.ReadFile(config.CAFile); err != nil {
			return "", "", fmt.Errorf("failed to read the CA of the kubeconfig: %w", err)
		}
	}
	if len(caData) == 0 {
		return "", "", errors.New("no CA for nodes: set --cluster-info-kubeconfig, publish kube-public/cluster-info, or use a kubeconfig with a CA")
	}
	return config.Host, string(caData), nil
}
