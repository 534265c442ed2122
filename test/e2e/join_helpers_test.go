package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

var machineResource = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machines"}

// joinProfile is the default profile the join tests use: it posts a MachineJoin.
const joinProfile = "osp-ubuntu"

// joinMD creates MD name in ns on the default osp-ubuntu, and its MachineSet of
// revision 1 as machine-controller makes it (controlled by the MD, with its
// template), and returns the MachineSet.
func joinMD(t testing.TB, ns, name string) *clusterv1alpha1.MachineSet {
	t.Helper()
	return joinMDIn(t, env.dynamic, ns, name)
}

// joinMDIn is joinMD in the cluster of dyn.
func joinMDIn(t testing.TB, dyn dynamic.Interface, ns, name string) *clusterv1alpha1.MachineSet {
	t.Helper()
	md := syncerMD(ns, name, joinProfile, "1")
	got := createObjectIn(t, dyn, mdResource, md)
	ms := &clusterv1alpha1.MachineSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "MachineSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-5d8f7", Labels: md.Spec.Template.Labels,
			Annotations:     map[string]string{machinecontroller.AnnotationMDRevision: "1"},
			OwnerReferences: []metav1.OwnerReference{controllerOf("MachineDeployment", name, got.GetUID())}},
	}
	ms.Spec.Selector = md.Spec.Selector
	ms.Spec.Template = md.Spec.Template
	created := createObjectIn(t, dyn, msResource, ms)
	ms.UID = created.GetUID()
	return ms
}

// createMachine creates Machine name of ms as machine-controller does:
// controlled by ms, with its template's labels and spec.
func createMachine(t testing.TB, ms *clusterv1alpha1.MachineSet, name string) {
	t.Helper()
	createMachineIn(t, env.dynamic, ms, name)
}

// createMachineIn is createMachine in the cluster of dyn.
func createMachineIn(t testing.TB, dyn dynamic.Interface, ms *clusterv1alpha1.MachineSet, name string) {
	t.Helper()
	m := &clusterv1alpha1.Machine{
		TypeMeta: metav1.TypeMeta{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "Machine"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ms.Namespace, Name: name, Labels: ms.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{controllerOf("MachineSet", ms.Name, ms.UID)}},
		Spec: ms.Spec.Template.Spec,
	}
	createObjectIn(t, dyn, machineResource, m)
}

func controllerOf(kind, name string, uid types.UID) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: "cluster.k8s.io/v1alpha1", Kind: kind, Name: name, UID: uid,
		Controller: &yes, BlockOwnerDeletion: &yes}
}

// createObject creates obj (of gvr, in its namespace) through the dynamic
// client, deleted when the test ends.
func createObject(t testing.TB, gvr schema.GroupVersionResource, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	return createObjectIn(t, env.dynamic, gvr, obj)
}

// createObjectIn is createObject in the cluster of dyn.
func createObjectIn(t testing.TB, dyn dynamic.Interface, gvr schema.GroupVersionResource, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	o := &unstructured.Unstructured{Object: u}
	created, err := dyn.Resource(gvr).Namespace(o.GetNamespace()).Create(context.Background(), o, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("%s %s/%s: %v", gvr.Resource, o.GetNamespace(), o.GetName(), err)
	}
	t.Cleanup(func() {
		_ = dyn.Resource(gvr).Namespace(o.GetNamespace()).Delete(context.Background(), o.GetName(), metav1.DeleteOptions{})
	})
	return created
}

// createNode registers Node name, as a kubelet would.
func createNode(t testing.TB, name string) {
	t.Helper()
	if _, err := env.kube.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// userDataToken waits for MD ns/md's bootstrap Secret and returns the
// credential its user-data holds: the fetch token osm-bootstrap posts the
// MachineJoin with.
func userDataToken(t testing.TB, ns, md string) string {
	t.Helper()
	return userDataTokenIn(t, env.kube, ns, md)
}

// userDataTokenIn is userDataToken of the cluster of kube.
func userDataTokenIn(t testing.TB, kube kubernetes.Interface, ns, md string) string {
	t.Helper()
	s := payloadSecretIn(t, kube, ns, md, "bootstrap", func(*corev1.Secret) error { return nil })
	script := cloudConfigFile(t, string(s.Data[machinecontroller.SecretDataKey]), "/opt/bin/osm-bootstrap")
	m := bearerRE.FindStringSubmatch(script)
	if m == nil || !strings.Contains(script, "/machinejoins'") {
		t.Fatalf("no MachineJoin with a token in osm-bootstrap of %s/%s:\n%s", ns, md, script)
	}
	return m[1]
}

// joinAs posts a MachineJoin through kube-apiserver with token.
func joinAs(t testing.TB, token, ns, machine, boot string) (*osmv1alpha1.MachineJoin, error) {
	t.Helper()
	return joinAsBoot(t, token, ns, machine, osmv1alpha1.MachineJoinSpec{BootID: boot})
}

// joinAsBoot is joinAs of a boot that may send its secret (boot.BootSecret).
func joinAsBoot(t testing.TB, token, ns, machine string, boot osmv1alpha1.MachineJoinSpec) (*osmv1alpha1.MachineJoin, error) {
	t.Helper()
	return joinAsBootAt(t, env.config, token, ns, machine, boot)
}

// joinAsBootAt is joinAsBoot through the kube-apiserver of cluster.
func joinAsBootAt(t testing.TB, cluster *rest.Config, token, ns, machine string, boot osmv1alpha1.MachineJoinSpec) (*osmv1alpha1.MachineJoin, error) {
	t.Helper()
	cfg := &rest.Config{Host: cluster.Host, BearerToken: token, QPS: 100, Burst: 200,
		TLSClientConfig: rest.TLSClientConfig{CAData: cluster.CAData, CAFile: cluster.CAFile}}
	c, err := osmclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c.OsmV1alpha1().MachineJoins(ns).Create(context.Background(), &osmv1alpha1.MachineJoin{
		Spec: osmv1alpha1.MachineJoinSpec{MachineName: machine, BootID: boot.BootID, BootSecret: boot.BootSecret},
	}, metav1.CreateOptions{})
}

// joinToken is the token of the kubelet bootstrap kubeconfig an answer holds.
func joinToken(t testing.TB, answer *osmv1alpha1.MachineJoin) string {
	t.Helper()
	cfg, err := clientcmd.Load(answer.Status.Kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig of the answer for %s: %v", answer.Name, err)
	}
	for _, user := range cfg.AuthInfos {
		if user.Token != "" {
			return user.Token
		}
	}
	t.Fatalf("no token in the kubeconfig of the answer for %s", answer.Name)
	return ""
}

// refused checks that err is a 403 saying want.
func refused(t testing.TB, what string, err error, want string) {
	t.Helper()
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want 403 saying %q", what, err, want)
	}
}

// kubeletCSR creates, with token, a kubelet's request for the client
// certificate of node, deleted when the test ends.
func kubeletCSR(t *testing.T, token, node string) (string, error) {
	t.Helper()
	return kubeletCSRAt(t, env.config, env.kube, token, node)
}

// kubeletCSRAt is kubeletCSR through the kube-apiserver of cluster, whose
// admin client is admin.
func kubeletCSRAt(t *testing.T, cluster *rest.Config, admin kubernetes.Interface, token, node string) (string, error) {
	t.Helper()
	req := nodeCSR(t, node)
	req.GenerateName = "e2e-join-"
	csr, err := asTokenAt(t, cluster, token).CertificatesV1().CertificateSigningRequests().Create(context.Background(), req, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	t.Cleanup(func() {
		_ = admin.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), csr.Name, metav1.DeleteOptions{})
	})
	return csr.Name, nil
}

// csrDecision waits for the approval or denial of CSR name.
func csrDecision(t testing.TB, name string) certificatesv1.CertificateSigningRequestCondition {
	t.Helper()
	return csrDecisionIn(t, env.kube, name)
}

// csrDecisionIn is csrDecision in the cluster of kube.
func csrDecisionIn(t testing.TB, kube kubernetes.Interface, name string) certificatesv1.CertificateSigningRequestCondition {
	t.Helper()
	var got certificatesv1.CertificateSigningRequestCondition
	eventually(t, 30*time.Second, func() error {
		csr, err := kube.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range csr.Status.Conditions {
			if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied {
				got = c
				return nil
			}
		}
		return fmt.Errorf("CSR %s is not decided", name)
	})
	return got
}

// nodeJoinMode waits for the OSC of ns/md to say how its nodes join.
func nodeJoinMode(t testing.TB, ns, md string) osmv1alpha1.NodeJoinMode {
	t.Helper()
	var mode osmv1alpha1.NodeJoinMode
	eventually(t, time.Minute, func() error {
		osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).Get(context.Background(), md, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if osc.Status.NodeJoin == nil {
			return fmt.Errorf("OSC %s/%s: no status.nodeJoin", ns, md)
		}
		mode = osc.Status.NodeJoin.Mode
		return nil
	})
	return mode
}
