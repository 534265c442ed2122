package defaultosps

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// fetchToken is shaped and sized as the fetch tokens the syncer puts into
// payloads: a ServiceAccount token (a JWT) bound to a Secret, signed with a
// 4096-bit RSA key (a 683-character signature; clusters with 2048-bit keys
// write 342), ~1.5 KB. The size budget of the bootstrap payload must hold with it.
var fetchToken = func() string {
	enc := base64.RawURLEncoding
	header := `{"alg":"RS256","kid":"` + strings.Repeat("k", 43) + `"}`
	claims := `{"aud":["https://kubernetes.default.svc.cluster.local"],"exp":1767312000,"iat":1767225600,` +
		`"iss":"https://kubernetes.default.svc.cluster.local","jti":"00000000-0000-0000-0000-000000000000",` +
		`"kubernetes.io":{"namespace":"cloud-init-settings",` +
		`"secret":{"name":"osm-fetch-0123456789abcdef-token","uid":"00000000-0000-0000-0000-000000000000"},` +
		`"serviceaccount":{"name":"osm-fetch-0123456789abcdef","uid":"00000000-0000-0000-0000-000000000000"}},` +
		`"nbf":1767225600,"sub":"system:serviceaccount:cloud-init-settings:osm-fetch-0123456789abcdef"}`
	return enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(claims)) + "." + strings.Repeat("s", 683)
}()

// sshKeys is a 4 KiB list of SSH keys: the size budget of the bootstrap payload
// must hold with it.
func sshKeys() []string {
	var keys []string
	for size, i := 0, 0; size < 4096; i++ {
		k := fmt.Sprintf("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI%s user%d@example.com", strings.Repeat("x", 300), i)
		keys = append(keys, k)
		size += len(k) + 1
	}
	return keys
}

// machineDeployment builds the MD a test renders: one OSP, cloud and IP family.
func machineDeployment(t testing.TB, osp *ospv1alpha1.OperatingSystemProfile, cloud, ipFamily string) *clusterv1alpha1.MachineDeployment {
	t.Helper()
	osSpec := map[string]any{}
	if osp.Spec.OSName == ospv1alpha1.OperatingSystemFlatcar {
		osSpec["provisioningUtility"] = string(osp.Spec.ProvisioningUtility)
	}
	network := map[string]any{"cidr": "", "gateway": "", "dns": map[string]any{"servers": nil}}
	if ipFamily != "" {
		network["ipFamily"] = ipFamily
	}
	pc := map[string]any{
		"sshPublicKeys":       sshKeys(),
		"caPublicKey":         "",
		"cloudProvider":       cloud,
		"cloudProviderSpec":   map[string]any{},
		"operatingSystem":     string(osp.Spec.OSName),
		"operatingSystemSpec": osSpec,
		"network":             network,
	}
	if ipFamily == "" {
		// Without an external cloud provider the payload carries the cloud-config file.
		pc["overwriteCloudConfig"] = "[Global]\nzone = \"test\"\n"
	}
	raw, err := json.Marshal(pc)
	if err != nil {
		t.Fatal(err)
	}
	// One name for all clouds: payloads that do not depend on the cloud come out
	// byte-identical, and each distinct payload is validated once.
	name := "md-" + strings.TrimPrefix(osp.Name, "osp-")
	return &clusterv1alpha1.MachineDeployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "MachineDeployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: "kube-system",
			Annotations: map[string]string{
				"k8c.io/operating-system-profile":                            osp.Name,
				"machinedeployment.clusters.k8s.io/revision":                 "1",
				"v1.kubelet-config.machine-controller.kubermatic.io/MaxPods": "150",
			},
		},
		Spec: clusterv1alpha1.MachineDeploymentSpec{
			Template: clusterv1alpha1.MachineTemplateSpec{
				Spec: clusterv1alpha1.MachineSpec{
					ProviderSpec: clusterv1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}},
					Versions:     clusterv1alpha1.MachineVersionInfo{Kubelet: "1.33.2"},
				},
			},
		},
	}
}

// renderInput is the cluster and node side of a render. Dual-stack renders use
// an external cloud provider; IPv4 renders an in-tree style cloud-config file.
func renderInput(ca string, external bool) render.Input {
	return render.Input{
		Cluster: render.ClusterInfo{
			ServerURL:            serverURL,
			CACert:               ca,
			HostCACert:           ca,
			BootstrapToken:       "abcdef.0123456789abcdef",
			CloudInitGetterToken: fetchToken,
		},
		Node: render.NodeOptions{
			ClusterDNSIPs:         []string{"10.96.0.10"},
			ContainerRuntime:      "containerd",
			ExternalCloudProvider: external,
			InitialTaints:         "dedicated=infra:NoSchedule",
			HTTPProxy:             proxyURL,
			NoProxy:               "10.0.0.0/8,.cluster.local,api.cluster.example.com",
			InsecureRegistries:    []string{"registry.internal:5000"},
			RegistryMirrors:       []string{"https://mirror.example.com"},
			PauseImage:            "registry.internal:5000/pause:3.10",
			KubeletFeatureGates:   map[string]bool{"GracefulNodeShutdown": true},
		},
	}
}

// testCA returns a self-signed CA certificate in PEM.
func testCA(t testing.TB) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
