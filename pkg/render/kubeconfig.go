package render

import (
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// bootstrapContext names the cluster, user and context of the kubelet's
// bootstrap kubeconfig; kept short because user-data is size-limited.
const bootstrapContext = "c"

// bootstrapKubeconfig is the kubeconfig the kubelet uses for TLS bootstrapping.
func bootstrapKubeconfig(c *ClusterInfo) (string, error) {
	cfg := clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{bootstrapContext: {
			Server:                   c.ServerURL,
			CertificateAuthorityData: []byte(c.CACert),
		}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{bootstrapContext: {Token: c.BootstrapToken}},
		Contexts:       map[string]*clientcmdapi.Context{bootstrapContext: {Cluster: bootstrapContext, AuthInfo: bootstrapContext}},
		CurrentContext: bootstrapContext,
	}
	data, err := clientcmd.Write(cfg)
	if err != nil {
		return "", err
	}
	return string(data), nil
}
