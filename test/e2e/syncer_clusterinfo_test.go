package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
)

const caFile = "/etc/kubernetes/pki/ca.crt"

// TestSyncerReRendersOnClusterCARotation: a new CA published in
// kube-public/cluster-info reaches the Secrets of an MD that did not change,
// through the harness's osm-apiserver (which reads cluster-info from the
// cluster), without a restart.
func TestSyncerReRendersOnClusterCARotation(t *testing.T) {
	ns := syncerNamespace(t)
	osp := e2eProfile(t, "e2e-ca-"+ns, "v1.0.0")
	osp.Spec.ProvisioningConfig.Files = append(osp.Spec.ProvisioningConfig.Files, ospv1alpha1.File{
		Path: caFile, Permissions: 644,
		Content: ospv1alpha1.FileContent{Inline: &ospv1alpha1.FileContentInline{Data: "{{ .KubernetesCACert }}"}},
	})
	applyProfile(t, osp)
	createMD(t, syncerMD(ns, "rotated", osp.Name, "1"))

	oldCA := clusterInfoCA(t)
	payloadSecret(t, ns, "rotated", "provisioning", withCA(t, oldCA))
	kubeletKubeconfig(t, ns, "rotated", oldCA)
	mdVersion := mdResourceVersion(t, ns, "rotated")
	// API watchers hear of the change too, though no MD or profile changed.
	oscs := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns)
	eventually(t, 30*time.Second, func() error {
		_, err := oscs.Get(context.Background(), "rotated", metav1.GetOptions{})
		return err
	})
	list, err := oscs.List(testContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := oscs.Watch(testContext(t), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	newCA := selfSignedCA(t)
	setClusterInfoCA(t, newCA)
	// Restore before the MD goes (cleanups run last-in first-out) and wait
	// until the server has the old CA again, so later tests see what they expect.
	t.Cleanup(func() {
		setClusterInfoCA(t, oldCA)
		kubeletKubeconfig(t, ns, "rotated", oldCA)
	})

	waitForEvents(t, w, watch.Modified, map[string]func(*osmv1alpha1.OperatingSystemConfig) bool{
		"rotated": func(o *osmv1alpha1.OperatingSystemConfig) bool { return oscCA(o) == newCA },
	})
	payloadSecret(t, ns, "rotated", "provisioning", withCA(t, newCA))
	kubeletKubeconfig(t, ns, "rotated", newCA)
	if got := mdResourceVersion(t, ns, "rotated"); got != mdVersion {
		t.Errorf("the MD changed (resourceVersion %s -> %s); the re-render must not need it", mdVersion, got)
	}
}

// withCA checks that a provisioning Secret writes ca as the cluster CA.
func withCA(t *testing.T, ca string) func(*corev1.Secret) error {
	return func(s *corev1.Secret) error {
		got := cloudConfigFile(t, string(s.Data[machinecontroller.SecretDataKey]), caFile)
		if strings.TrimSpace(got) != strings.TrimSpace(ca) {
			return fmt.Errorf("%s: %s is not the expected CA:\n%s", s.Name, caFile, got)
		}
		return nil
	}
}

func oscCA(o *osmv1alpha1.OperatingSystemConfig) string {
	for _, f := range o.Spec.ProvisioningConfig.Files {
		if f.Path == caFile && f.Content.Inline != nil {
			return f.Content.Inline.Data
		}
	}
	return ""
}

// kubeletKubeconfig waits for the MD's kubelet bootstrap kubeconfig to trust ca.
func kubeletKubeconfig(t *testing.T, ns, md, ca string) {
	t.Helper()
	eventually(t, time.Minute, func() error {
		s, err := env.kube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(context.Background(),
			machinecontroller.KubeletBootstrapSecretName(md, ns), metav1.GetOptions{})
		if err != nil {
			return err
		}
		cfg, err := clientcmd.Load(s.Data[machinecontroller.KubeconfigDataKey])
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		for _, c := range cfg.Clusters {
			if string(c.CertificateAuthorityData) != ca {
				return fmt.Errorf("%s: kubeconfig trusts another CA", s.Name)
			}
		}
		return nil
	})
}

// clusterInfo reads kube-public/cluster-info and its kubeconfig.
func clusterInfo(t *testing.T) (*corev1.ConfigMap, *clientcmdapi.Config) {
	t.Helper()
	cm, err := env.kube.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(context.Background(), "cluster-info", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load([]byte(cm.Data["kubeconfig"]))
	if err != nil {
		t.Fatalf("cluster-info: %v", err)
	}
	return cm, cfg
}

// clusterInfoCA returns the CA kube-public/cluster-info publishes.
func clusterInfoCA(t *testing.T) string {
	t.Helper()
	_, cfg := clusterInfo(t)
	for _, c := range cfg.Clusters {
		return string(c.CertificateAuthorityData)
	}
	t.Fatal("cluster-info has no cluster")
	return ""
}

// setClusterInfoCA publishes ca in kube-public/cluster-info, keeping the server URL.
func setClusterInfoCA(t *testing.T, ca string) {
	t.Helper()
	cm, cfg := clusterInfo(t)
	for _, c := range cfg.Clusters {
		c.CertificateAuthorityData = []byte(ca)
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["kubeconfig"] = string(data)
	if _, err := env.kube.CoreV1().ConfigMaps(metav1.NamespacePublic).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("cluster-info: %v", err)
	}
}

func mdResourceVersion(t *testing.T, ns, name string) string {
	t.Helper()
	md, err := env.dynamic.Resource(mdResource).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return md.GetResourceVersion()
}

// selfSignedCA returns the PEM of a throwaway CA certificate.
func selfSignedCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "e2e-rotated-ca"},
		NotBefore:    time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
