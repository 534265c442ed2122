package machinecontroller

import (
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// bootstrapContext names the cluster, user and context of the kubelet's
// bootstrap kubeconfig; kept short because user-data is size-limited.
const bootstrapContext = "c"

// BootstrapKubeconfig is the kubeconfig the kubelet uses for TLS bootstrapping:
// the API server nodes reach, its CA (PEM) and a bootstrap token. OSP templates
// read it as .BootstrapKubeconfig; the syncer keeps it in each MD's
// KubeletBootstrapSecretName for nodes to fetch.
func BootstrapKubeconfig(serverURL string, caPEM []byte, token string) ([]byte, error) {
	return clientcmd.Write(clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{bootstrapContext: {
			Server:                   serverURL,
			CertificateAuthorityData: caPEM,
		}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{bootstrapContext: {Token: token}},
		Contexts:       map[string]*clientcmdapi.Context{bootstrapContext: {Cluster: bootstrapContext, AuthInfo: bootstrapContext}},
		CurrentContext: bootstrapContext,
	})
}
