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

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
)

var (
	mdResource      = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinedeployments"}
	msResource      = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinesets"}
	machineResource = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machines"}
)

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

// createMachine creates the boot's MachineSet and Machine as machine-controller
// makes them: the MachineSet controlled by the MD, the Machine, named as the
// node will be, by the MachineSet, both with the MD's template.
func createMachine(ctx context.Context, b boot) error {
	md, err := env.dynamic.Resource(mdResource).Namespace(testNamespace).Get(ctx, b.md, metav1.GetOptions{})
	if err != nil {
		return err
	}
	template, _, err := unstructured.NestedMap(md.Object, "spec", "template")
	if err != nil {
		return fmt.Errorf("MachineDeployment %s: %w", b.md, err)
	}
	selector, _, _ := unstructured.NestedMap(md.Object, "spec", "selector")
	msName := b.md + "-5d8f7"
	ms := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.k8s.io/v1alpha1",
		"kind":       "MachineSet",
		"metadata": map[string]any{
			"name": msName, "namespace": testNamespace,
			"annotations":     map[string]any{machinecontroller.AnnotationMDRevision: "1"},
			"ownerReferences": []any{controllerRef("MachineDeployment", b.md, string(md.GetUID()))},
		},
		"spec": map[string]any{"replicas": int64(1), "selector": selector, "template": template},
	}}
	ms, err = env.dynamic.Resource(msResource).Namespace(testNamespace).Create(ctx, ms, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("MachineSet %s: %w", msName, err)
	}
	labels, _, _ := unstructured.NestedMap(template, "metadata", "labels")
	spec, _, _ := unstructured.NestedMap(template, "spec")
	machine := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.k8s.io/v1alpha1",
		"kind":       "Machine",
		"metadata": map[string]any{
			"name": b.node, "namespace": testNamespace, "labels": labels,
			"ownerReferences": []any{controllerRef("MachineSet", msName, string(ms.GetUID()))},
		},
		"spec": spec,
	}}
	if _, err := env.dynamic.Resource(machineResource).Namespace(testNamespace).Create(ctx, machine, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("Machine %s: %w", b.node, err)
	}
	return nil
}

func controllerRef(kind, name, uid string) map[string]any {
	return map[string]any{"apiVersion": "cluster.k8s.io/v1alpha1", "kind": kind, "name": name, "uid": uid,
		"controller": true, "blockOwnerDeletion": true}
}

// joinUser is the user the machine's join credential authenticates as.
func joinUser(machine string) string {
	return "system:serviceaccount:" + nodejoin.Namespace + ":" + nodejoin.AccountName(nodejoin.MachineKey{Namespace: testNamespace, Name: machine})
}

// kubeletCSRs are the issued client CSRs the join identity of machine made
// for nodeName; an approved, issued CSR for another subject is an error.
func kubeletCSRs(ctx context.Context, machine, nodeName string) (int, error) {
	list, err := env.kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, csr := range list.Items {
		if csr.Spec.Username != joinUser(machine) || csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
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
			return 0, fmt.Errorf("CSR %s of the machine's join identity is for %q, want system:node:%s", csr.Name, req.Subject.CommonName, nodeName)
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
