package inputs

import (
	"context"
	"errors"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/options"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// ClusterInfo returns the cluster facts nodes need. The API server URL and CA
// come from --cluster-info-kubeconfig when set, else from the cluster's
// kube-public/cluster-info ConfigMap (what kubeadm publishes), else from the
// client configuration of the cluster itself.
func ClusterInfo(ctx context.Context, flags *options.ClusterFlags, client kubernetes.Interface, config *rest.Config) (render.ClusterInfo, error) {
	if flags.ClusterInfoKubeconfig != "" {
		return flags.ClusterInfo()
	}
	c, err := flags.Credentials()
	if err != nil {
		return c, err
	}
	c.ServerURL, c.CACert, err = discoverCluster(ctx, client, config)
	return c, err
}

// ClusterInfoFrom returns the cluster facts of cm, the kube-public/cluster-info
// ConfigMap; nil cm (none, or not readable) falls back to the client
// configuration, as at start. It is what a watch of cluster-info recomputes.
func ClusterInfoFrom(flags *options.ClusterFlags, cm *corev1.ConfigMap, config *rest.Config) (render.ClusterInfo, error) {
	c, err := flags.Credentials()
	if err != nil {
		return c, err
	}
	c.ServerURL, c.CACert, err = clusterFrom(cm, config)
	return c, err
}

func discoverCluster(ctx context.Context, client kubernetes.Interface, config *rest.Config) (server, ca string, err error) {
	cm, err := client.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, ClusterInfoName, metav1.GetOptions{})
	switch {
	case err == nil:
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
		klog.InfoS("No usable kube-public/cluster-info, using the API server of the kubeconfig for nodes", "reason", err.Error())
		cm = nil
	default:
		return "", "", fmt.Errorf("failed to read configmap kube-public/cluster-info: %w", err)
	}
	return clusterFrom(cm, config)
}

// ClusterInfoName is the ConfigMap in kube-public that kubeadm publishes.
const ClusterInfoName = "cluster-info"

func clusterFrom(cm *corev1.ConfigMap, config *rest.Config) (server, ca string, err error) {
	if cm != nil {
		server, ca, err := options.ServerAndCA([]byte(cm.Data["kubeconfig"]))
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
