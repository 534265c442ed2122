package tokens

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// PurposeKubeconfig labels the Secret holding the kubelet's bootstrap kubeconfig.
const PurposeKubeconfig = "kubelet-bootstrap-config"

// KubeconfigSecret returns the Secret holding ref's kubelet bootstrap
// kubeconfig with the kubelet token tok, for the API server at serverURL with
// CA caPEM. The node fetches it with its fetch token while it provisions.
func KubeconfigSecret(ref machinecontroller.Ref, serverURL string, caPEM []byte, tok Token) (*corev1.Secret, error) {
	data, err := machinecontroller.BootstrapKubeconfig(serverURL, caPEM, tok.Value())
	if err != nil {
		return nil, fmt.Errorf("failed to write bootstrap kubeconfig of %s: %w", ref, err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        machinecontroller.KubeletBootstrapSecretName(ref.Name, ref.Namespace),
			Namespace:   machinecontroller.CloudInitSettingsNamespace,
			Labels:      ref.Labels(PurposeKubeconfig),
			Annotations: ref.Annotations(),
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{machinecontroller.KubeconfigDataKey: data},
	}, nil
}
