package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// reportingMD creates MD name in ns (profile osp, revision 1), its MachineSet
// of revision 1 and machines as machine-controller would, and returns the
// MD's fetch token once the syncer has put it into the bootstrap payload.
func reportingMD(t *testing.T, ns, osp, name string, machines ...string) string {
	t.Helper()
	return reportingMDOf(t, syncerMD(ns, name, osp, "1"), machines...)
}

// reportingMDOf is reportingMD of want, an MD as syncerMD makes it.
func reportingMDOf(t *testing.T, want *clusterv1alpha1.MachineDeployment, machines ...string) string {
	t.Helper()
	ns, name := want.Namespace, want.Name
	createMD(t, want)
	md, err := env.dynamic.Resource(mdResource).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	controller := func(kind, name string, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "cluster.k8s.io/v1alpha1", Kind: kind, Name: name,
			UID: types.UID(uid), Controller: ptr.To(true)}}
	}
	ms := &clusterv1alpha1.MachineSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "MachineSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-1", OwnerReferences: controller("MachineDeployment", name, string(md.GetUID())),
			Annotations: map[string]string{machinecontroller.AnnotationMDRevision: "1"}},
	}
	// The template of revision 1 is the MD's: the payloads render from it.
	ms.Spec.Selector = want.Spec.Selector
	ms.Spec.Template = want.Spec.Template
	createObject(t, msResource, ms)
	set, err := env.dynamic.Resource(msResource).Namespace(ns).Get(context.Background(), ms.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range machines {
		createObject(t, machineResource, &clusterv1alpha1.Machine{
			TypeMeta:   metav1.TypeMeta{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "Machine"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: m, Labels: map[string]string{"machine": name}, OwnerReferences: controller("MachineSet", ms.Name, string(set.GetUID()))},
		})
	}
	return fetchToken(t, payloadSecret(t, ns, name, "bootstrap", annotated("1", "v1.0.0")))
}

// nodeClient is a client of osm.k8c.io through kube-apiserver as a node is:
// with token only ("" for none), verifying the server's certificate.
func nodeClient(t *testing.T, token string) osmclient.Interface {
	t.Helper()
	return nodeClientAt(t, env.config, token)
}

// nodeClientAt is nodeClient of the kube-apiserver of cluster.
func nodeClientAt(t *testing.T, cluster *rest.Config, token string) osmclient.Interface {
	t.Helper()
	cfg := &rest.Config{Host: cluster.Host, BearerToken: token, QPS: 500, Burst: 500,
		TLSClientConfig: rest.TLSClientConfig{CAData: cluster.CAData, CAFile: cluster.CAFile}}
	c, err := osmclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// step is a step record of boot b1 of osp e2e at revision 1.
func step(name string, phase osmv1alpha1.StepPhase, code int32, logTail string) *osmv1alpha1.BootStep {
	s := &osmv1alpha1.BootStep{Spec: osmv1alpha1.BootStepSpec{Step: name, Phase: phase, BootID: "b1",
		Profile: osmv1alpha1.ProfileReference{Name: "e2e", Version: "v1.0.0"}, MachineDeploymentRevision: "1", LogTail: logTail}}
	if phase != osmv1alpha1.StepPhaseStarted {
		s.Spec.ExitCode = ptr.To(code)
		s.Spec.Duration = &metav1.Duration{Duration: 1500 * time.Millisecond}
	}
	return s
}

// report posts s for machine of ns as client, retrying while the server
// does not know the machine or MD yet (its informers are moments behind).
func report(t *testing.T, client osmclient.Interface, ns, machine string, s *osmv1alpha1.BootStep) error {
	t.Helper()
	var err error
	_ = poll(context.Background(), 30*time.Second, func() error {
		_, err = client.OsmV1alpha1().BootReports(ns).CreateStep(context.Background(), machine, s, metav1.CreateOptions{})
		if apierrors.IsForbidden(err) && (strings.Contains(err.Error(), "is not known") || strings.Contains(err.Error(), "is none")) {
			return err
		}
		return nil
	})
	return err
}

// bootReport waits for the report of machine in ns to satisfy ok.
func bootReport(t *testing.T, ns, machine string, ok func(*osmv1alpha1.BootReport) error) *osmv1alpha1.BootReport {
	t.Helper()
	var r *osmv1alpha1.BootReport
	eventually(t, 30*time.Second, func() error {
		var err error
		if r, err = env.osm.OsmV1alpha1().BootReports(ns).Get(context.Background(), machine, metav1.GetOptions{}); err != nil {
			return err
		}
		return ok(r)
	})
	return r
}

func inState(state osmv1alpha1.BootState) func(*osmv1alpha1.BootReport) error {
	return func(r *osmv1alpha1.BootReport) error {
		if r.Status.State != state {
			return fmt.Errorf("%s: state %s, want %s", r.Name, r.Status.State, state)
		}
		return nil
	}
}

// touchBootReports writes a Secret the boot reports' informer watches, which
// moves the feed's boot-reports stream on (as createMachineSet does its
// MachineSets'); the syncer deletes it soon after: it is no MD's.
func touchBootReports(t *testing.T) {
	t.Helper()
	ref := machinecontroller.Ref{Namespace: "e2e-nobody", Name: fmt.Sprintf("touch-%d", time.Now().UnixNano())}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: bootreports.Namespace, Name: bootreports.SecretName(ref.Namespace, ref.Name),
		Labels: ref.Labels(bootreports.Purpose), Annotations: ref.Annotations()}, Type: bootreports.SecretType}
	secrets := env.kube.CoreV1().Secrets(bootreports.Namespace)
	if _, err := secrets.Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = secrets.Delete(context.Background(), s.Name, metav1.DeleteOptions{}) })
}
