package bootstraptoken

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/osm-apiserver/osm-apiserver/pkg/syncer/mdref"
)

// KubeconfigKey is the data key of the kubelet's bootstrap kubeconfig.
const KubeconfigKey = "kubeconfig"

// PurposeKubeconfig labels the Secret holding the kubelet's bootstrap kubeconfig.
const PurposeKubeconfig = "kubelet-bootstrap-config"

// Cluster is what a kubeconfig needs to reach and trust kube-apiserver.
type Cluster struct {
	ServerURL string
	CACert    []byte
}

// KubeconfigSecret returns the Secret, named name in namespace, holding the
// kubelet's bootstrap kubeconfig with tok for ref. The node fetches it with its
// fetch token while it provisions.
func KubeconfigSecret(ref mdref.Ref, namespace, name string, cluster Cluster, tok Token) (*corev1.Secret, error) {
	cfg := clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{"cluster": {
			Server:                   cluster.ServerURL,
			CertificateAuthorityData: cluster.CACert,
		}},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{"kubelet-bootstrap": {Token: tok.Value()}},
		Contexts: map[string]*clientcmdapi.Context{"kubelet-bootstrap": {
			Cluster:  "cluster",
			AuthInfo: "kubelet-bootstrap",
		}},
		CurrentContext: "kubelet-bootstrap",
	}
	data, err := clientcmd.Write(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to write bootstrap kubeconfig of %s: %w", ref, err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   namespace,
			Labels:      ref.Labels(PurposeKubeconfig),
			Annotations: ref.Annotations(),
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{KubeconfigKey: data},
	}, nil
}
