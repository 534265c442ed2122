package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
	"github.com/osm-apiserver/osm-apiserver/pkg/servingcert"
)

var apiServiceResource = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// TestManagementWorkerTopology runs the topology upstream documents (KKP):
// osm-apiserver beside the control plane, profiles in the management cluster
// (the test cluster, with the default profiles), everything of the nodes in
// a second, worker cluster that has artifacts/deploy-worker applied. The
// binary runs with --kubeconfig and --worker-cluster-kubeconfig only, each as
// its ServiceAccount's identity, and the default serving-certificate mode:
// delegated authentication and authorization default to the worker, which
// proxies the nodes to it, and its caBundle is kept in the worker's
// APIService. A machine of a default-profile MD in the worker joins: its
// MachineJoin is answered, its node's CSR approved, a boot step reported,
// and `kubectl get osc` in the worker lists its OSC. The management
// cluster's APIService (the harness's) is neither used nor changed.
func TestManagementWorkerTopology(t *testing.T) {
	ctx := testContext(t)
	worker, workerAdmin, workerKube, workerDyn := startWorkerCluster(t)
	port := freePort(t)
	applyWorkerManifests(t, workerAdmin, port)
	managementBefore := apiServiceCABundle(t, env.dynamic)
	deleteServingCertSecret(t) // a self-managed replica of another test may have made it
	t.Cleanup(func() { deleteServingCertSecret(t) })

	startTopologyProcess(t, port, filepath.Join(env.dir, "osm-apiserver.kubeconfig"), serviceAccountKubeconfig(t, worker, workerAdmin))
	eventually(t, 2*time.Minute, func() error { return apiServiceAvailable(workerDyn) })
	secret, err := env.kube.CoreV1().Secrets("kube-system").Get(ctx, servingcert.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the serving certificate's Secret in the management cluster: %v", err)
	}
	if got := apiServiceCABundle(t, workerDyn); got != string(secret.Data[servingcert.BundleKey]) {
		t.Errorf("the worker's APIService trusts %d bytes, not the CA bundle of the management cluster's Secret", len(got))
	}
	if got := apiServiceCABundle(t, env.dynamic); got != managementBefore {
		t.Error("the management cluster's APIService caBundle changed")
	}

	ns := "topology"
	if _, err := workerKube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ms := joinMDIn(t, workerDyn, ns, "pool")
	machine := "pool-5d8f7-w0rk1"
	createMachineIn(t, workerDyn, ms, machine)
	token := userDataTokenIn(t, workerKube, ns, "pool")

	boot := osmv1alpha1.MachineJoinSpec{BootID: "6a1f0c2e-4b3d-4e5f-8a9b-0c1d2e3f4a5b", BootSecret: "8c4e1a2b3d5f6a7b8c9d0e1f2a3b4c5d"}
	var answer *osmv1alpha1.MachineJoin
	// The worker's kube-apiserver discovers osm.k8c.io a moment after the
	// APIService is Available.
	eventually(t, time.Minute, func() error {
		answer, err = joinAsBootAt(t, worker, token, ns, machine, boot)
		return err
	})
	if answer.Status.Profile.Name != joinProfile || len(answer.Status.Provisioning) == 0 {
		t.Errorf("the answer is of profile %q with %d bytes of provisioning, want %s's payload", answer.Status.Profile.Name, len(answer.Status.Provisioning), joinProfile)
	}
	csr, err := kubeletCSRAt(t, worker, workerKube, joinToken(t, answer), machine)
	if err != nil {
		t.Fatalf("the join credential cannot create a CSR in the worker cluster: %v", err)
	}
	if c := csrDecisionIn(t, workerKube, csr); c.Type != certificatesv1.CertificateApproved || c.Reason != nodejoin.ReasonApproved {
		t.Errorf("CSR for the machine's node: %s %s: %s", c.Type, c.Reason, c.Message)
	}

	s := step("packages", osmv1alpha1.StepPhaseStarted, 0, "")
	s.Spec.BootID, s.Spec.BootSecret = boot.BootID, boot.BootSecret
	if err := report(t, nodeClientAt(t, worker, token), ns, machine, s); err != nil {
		t.Fatalf("a step record of the answered boot: %v", err)
	}
	workerOSM, err := osmclient.NewForConfig(worker)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		r, err := workerOSM.OsmV1alpha1().BootReports(ns).Get(ctx, machine, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return inState(osmv1alpha1.BootStateProvisioning)(r)
	})
	if out := kubectlIn(t, workerAdmin, "-n", ns, "get", "bootreports"); !strings.Contains(out, machine) {
		t.Errorf("kubectl get bootreports in the worker:\n%s", out)
	}
	out := kubectlIn(t, workerAdmin, "-n", ns, "get", "osc")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME") || !strings.HasPrefix(lines[1], "pool ") {
		t.Errorf("kubectl get osc in the worker, want a table of pool:\n%s", out)
	}
	// Nodes are given the worker's API server (its cluster-info).
	osc, err := workerOSM.OsmV1alpha1().OperatingSystemConfigs(ns).Get(ctx, "pool", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := osc.Status.APIServer; a == nil || a.URL != worker.Host || a.Source != osmv1alpha1.APIServerFromClusterInfo {
		t.Errorf("the OSC's nodes are given %+v, want %s from the worker's cluster-info", a, worker.Host)
	}
	if _, err := env.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s in the management cluster: %v, want none", ns, err)
	}
}

// applyWorkerManifests applies artifacts/deploy-worker to the worker cluster,
// its Service naming osm-apiserver on this host and port (localhost, as
// hack/lib/osm.sh registers the harness's).
func applyWorkerManifests(t *testing.T, kubeconfig string, port int) {
	t.Helper()
	ctx := testContext(t)
	out, err := kubectlAt(ctx, kubeconfig, "kustomize", filepath.Join(env.repo, "artifacts", "deploy-worker"))
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, doc := range strings.Split(out, "\n---\n") {
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &o.Object); err != nil {
			t.Fatal(err)
		}
		switch o.GetKind() {
		case "Service":
			if err := unstructured.SetNestedField(o.Object, "localhost", "spec", "externalName"); err != nil {
				t.Fatal(err)
			}
		case "APIService":
			if err := unstructured.SetNestedField(o.Object, int64(port), "spec", "service", "port"); err != nil {
				t.Fatal(err)
			}
		}
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(data))
	}
	file := filepath.Join(t.TempDir(), "worker.yaml")
	if err := os.WriteFile(file, []byte(strings.Join(docs, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := kubectlAt(ctx, kubeconfig, "apply", "--server-side", "-f", file); err != nil {
		t.Fatal(err)
	}
}

// serviceAccountKubeconfig writes a kubeconfig of the worker cluster as its
// ServiceAccount kube-system/osm-apiserver: the harness's client certificate
// for that identity (what a deployment's token Secret stands for), with only
// the RBAC artifacts/deploy-worker grants.
func serviceAccountKubeconfig(t *testing.T, worker *rest.Config, adminKubeconfig string) string {
	t.Helper()
	pki := filepath.Join(filepath.Dir(adminKubeconfig), "pki")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["worker"] = &clientcmdapi.Cluster{Server: worker.Host, CertificateAuthority: filepath.Join(pki, "ca.crt")}
	cfg.AuthInfos["osm-apiserver"] = &clientcmdapi.AuthInfo{
		ClientCertificate: filepath.Join(pki, "osm-apiserver-client.crt"), ClientKey: filepath.Join(pki, "osm-apiserver-client.key")}
	cfg.Contexts["worker"] = &clientcmdapi.Context{Cluster: "worker", AuthInfo: "osm-apiserver"}
	cfg.CurrentContext = "worker"
	path := filepath.Join(t.TempDir(), "worker-osm-apiserver.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// startTopologyProcess runs the osm-apiserver binary as the management
// cluster's Deployment with components/management-worker would: the default
// (self-managed) serving certificate, no delegation flags; a Lease of its
// own beside the harness's server.
func startTopologyProcess(t *testing.T, port int, management, worker string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "osm-apiserver.log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(processBinary(t), "serve",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--kubeconfig="+management, "--worker-cluster-kubeconfig="+worker,
		"--leader-elect-resource-name=e2e-topology", "--leader-elect-lease-duration=4s",
		"--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=500ms")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = f.Close()
		if t.Failed() {
			if data, err := os.ReadFile(log); err == nil {
				lines := strings.Split(strings.TrimSpace(string(data)), "\n")
				t.Logf("last lines of osm-apiserver's log:\n%s", strings.Join(lines[max(0, len(lines)-40):], "\n"))
			}
		}
	})
}

// apiServiceAvailable says whether osm.k8c.io's APIService is Available.
func apiServiceAvailable(dyn dynamic.Interface) error {
	o, err := dyn.Resource(apiServiceResource).Get(context.Background(), servingcert.APIServiceName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	conditions, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if m["type"] == "Available" {
			if m["status"] == "True" {
				return nil
			}
			return fmt.Errorf("APIService %s not Available: %v: %v", servingcert.APIServiceName, m["reason"], m["message"])
		}
	}
	return fmt.Errorf("APIService %s has no Available condition", servingcert.APIServiceName)
}

// apiServiceCABundle is the decoded caBundle of osm.k8c.io's APIService.
func apiServiceCABundle(t *testing.T, dyn dynamic.Interface) string {
	t.Helper()
	o, err := dyn.Resource(apiServiceResource).Get(context.Background(), servingcert.APIServiceName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	encoded, _, _ := unstructured.NestedString(o.Object, "spec", "caBundle")
	data, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// deleteServingCertSecret deletes the management cluster's self-managed
// serving certificate Secret, as an admin (osm-apiserver may not).
func deleteServingCertSecret(t *testing.T) {
	t.Helper()
	err := env.kube.CoreV1().Secrets("kube-system").Delete(context.Background(), servingcert.SecretName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
	}
}

// kubectlIn runs kubectl against the cluster of kubeconfig; it fails the
// test on a non-zero exit and returns stdout.
func kubectlIn(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := kubectlAt(ctx, kubeconfig, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// freePort is a TCP port of 127.0.0.1 that nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
