package inputs

import (
	"context"
	"errors"
	"fmt"
	"os"

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

func discoverCluster(ctx context.Context, client kubernetes.Interface, config *rest.Config) (server, ca string, err error) {
	cm, err := client.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, "cluster-info", metav1.GetOptions{})
	switch {
	case err == nil:
		server, ca, err := options.ServerAndCA([]byte(cm.Data["kubeconfig"]))
		if err != nil {
			return "", "", fmt.Errorf("configmap kube-public/cluster-info: %w", err)
		}
		return server, ca, nil
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
		klog.InfoS("No usable kube-public/cluster-info, using the API server of the kubeconfig for nodes", "reason", err.Error())
	default:
		return "", "", fmt.Errorf("failed to read configmap kube-public/cluster-info: %w", err)
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
