package node

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

var mdResource = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinedeployments"}

// createMD creates the boot's MachineDeployment: osp-ubuntu, the kit's
// kubelet version, the boot's cloud provider and IP family.
func createMD(ctx context.Context, b boot) error {
	md := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.k8s.io/v1alpha1",
		"kind":       "MachineDeployment",
		"metadata": map[string]any{
			"name":      b.md,
			"namespace": testNamespace,
			"labels":    map[string]any{bootLabel: b.name},
			"annotations": map[string]any{
				machinecontroller.AnnotationOSP:        "osp-ubuntu",
				machinecontroller.AnnotationMDRevision: "1",
			},
		},
		"spec": map[string]any{
			"replicas": int64(1),
			"selector": map[string]any{"matchLabels": map[string]any{"machine": b.md}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"machine": b.md}},
				"spec": map[string]any{
					"providerSpec": map[string]any{"value": map[string]any{
						"cloudProvider":       b.cloud,
						"cloudProviderSpec":   map[string]any{},
						"operatingSystem":     "ubuntu",
						"operatingSystemSpec": map[string]any{"distUpgradeOnBoot": false},
						"network":             map[string]any{"ipFamily": b.ipFamily},
					}},
					"versions": map[string]any{"kubelet": strings.TrimPrefix(env.kit.kubeVersion, "v")},
				},
			},
		},
	}}
	_, err := env.dynamic.Resource(mdResource).Namespace(testNamespace).Create(ctx, md, metav1.CreateOptions{})
	return err
}

// secretData waits for a Secret in cloud-init-settings and returns its key.
func secretData(ctx context.Context, name, key string) ([]byte, error) {
	var data []byte
	err := waitFor(ctx, "Secret "+machinecontroller.CloudInitSettingsNamespace+"/"+name, 2*time.Minute, func() (string, error) {
		s, err := env.kube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err.Error(), nil
		}
		if data = s.Data[key]; len(data) == 0 {
			return "no key " + key, nil
		}
		return "", nil
	})
	return data, err
}

// bootstrapUserData is the MD's bootstrap payload as the syncer wrote it.
func bootstrapUserData(ctx context.Context, md string) ([]byte, error) {
	return secretData(ctx, machinecontroller.SecretName(md, testNamespace, osm.PayloadTypeBootstrap), machinecontroller.SecretDataKey)
}

// kubeletTokenID is the id of the MD's kubelet bootstrap token, read from the
// bootstrap kubeconfig the node fetches.
func kubeletTokenID(ctx context.Context, md string) (string, error) {
	data, err := secretData(ctx, machinecontroller.KubeletBootstrapSecretName(md, testNamespace), machinecontroller.KubeconfigDataKey)
	if err != nil {
		return "", err
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return "", fmt.Errorf("bootstrap kubeconfig of %s: %w", md, err)
	}
	for _, user := range cfg.AuthInfos {
		if id, _, ok := strings.Cut(user.Token, "."); ok {
			return id, nil
		}
	}
	return "", fmt.Errorf("bootstrap kubeconfig of %s: no bootstrap token", md)
}

// kubeletCSRs are the issued client CSRs the bootstrap token tokenID made for
// nodeName; an approved, issued CSR for another subject is an error.
func kubeletCSRs(ctx context.Context, tokenID, nodeName string) (int, error) {
	list, err := env.kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, csr := range list.Items {
		if csr.Spec.Username != "system:bootstrap:"+tokenID || csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
			continue
		}
		if !approved(csr) || len(csr.Status.Certificate) == 0 {
			continue
		}
		block, _ := pem.Decode(csr.Spec.Request)
		if block == nil {
			return 0, fmt.Errorf("CSR %s: no PEM request", csr.Name)
		}
		req, err := x509.ParseCertificateRequest(block.Bytes)
		if err != nil {
			return 0, fmt.Errorf("CSR %s: %w", csr.Name, err)
		}
		if req.Subject.CommonName != "system:node:"+nodeName {
			return 0, fmt.Errorf("CSR %s of the MD's token is for %q, want system:node:%s", csr.Name, req.Subject.CommonName, nodeName)
		}
		n++
	}
	return n, nil
}

func approved(csr certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
