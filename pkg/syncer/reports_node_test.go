package syncer

import (
	"context"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	metadatafake "k8s.io/client-go/metadata/fake"
	fcache "k8s.io/client-go/tools/cache/testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
)

// storedReport is the Secret of machine's report after records, as the step
// subresource writes it.
func storedReport(t *testing.T, machine string, records ...*osm.BootStepSpec) *corev1.Secret {
	t.Helper()
	var r *osm.BootReport
	for _, rec := range records {
		out, err := bootreports.Apply(r, "workers", machine, rec, nil, time.Now().Add(-time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		r = out.Report
	}
	s, err := bootreports.Secret(machinecontroller.Ref{Namespace: "kube-system", Name: "workers"}, r)
	if err != nil {
		t.Fatal(err)
	}
	s.UID = types.UID("uid-" + machine)
	return s
}

// A report still Provisioning is completed once its machine's Node
// registers; one whose machine has no Node, and a failed one, stay.
func TestBootReportsAgreeWithNodes(t *testing.T) {
	started := &osm.BootStepSpec{Step: "kubelet-started", Phase: osm.StepPhaseStarted, BootID: "b"}
	failed := &osm.BootStepSpec{Step: "packages", Phase: osm.StepPhaseFailed, BootID: "b", ExitCode: new(int32)}
	secrets := map[string]*corev1.Secret{
		"joins":   storedReport(t, "joins", started),
		"no-node": storedReport(t, "no-node", started),
		"failed":  storedReport(t, "failed", failed),
		"noderef": storedReport(t, "noderef", started),
		"already": storedReport(t, "already", started),
	}
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	meta := metadatafake.NewSimpleMetadataClient(scheme)
	machineSource, nodeSource := fcache.NewFakeControllerSource(), fcache.NewFakeControllerSource()
	for name, s := range secrets {
		pm := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: *s.ObjectMeta.DeepCopy()}
		pm.CreationTimestamp = metav1.NewTime(time.Now().Add(-time.Hour))
		if err := meta.Tracker().Create(corev1.SchemeGroupVersion.WithResource("secrets"), pm, bootreports.Namespace); err != nil {
			t.Fatal(err)
		}
		machineSource.Add(&clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name}})
	}
	// Its Node was there before the leader looked.
	nodeSource.Add(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "already"}})
	machineInformer := informers.NewMachines(machineSource)
	nodeInformer := informers.NewNodes(nodeSource)
	reports := informers.NewBootReports(meta, nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go machineInformer.RunWithContext(ctx)
	go nodeInformer.RunWithContext(ctx)
	reports.Start(ctx.Done())

	h := start(t, func(c *Config) {
		c.MachineInformer, c.BootReports, c.Nodes = machineInformer, reports, nodeInformer
		c.Machines = machines.NewMachineReader(machineInformer.GetIndexer(), nil, nodeInformer.GetIndexer())
	})
	for _, s := range secrets {
		if err := h.client.Tracker().Add(s); err != nil {
			t.Fatal(err)
		}
	}
	h.osps.Add(profile("osp-ubuntu", "v1"))
	h.mds.Add(machineDeployment("workers", "osp-ubuntu", "1"))

	reportOf := func(machine string) *osm.BootReport {
		s, err := h.client.CoreV1().Secrets(bootreports.Namespace).Get(ctx, bootreports.SecretName("kube-system", machine), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := bootreports.FromSecret(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	inferred := func(machine string) func() (bool, error) {
		return func() (bool, error) {
			r := reportOf(machine)
			return r.Status.State == osm.BootStateSucceeded && r.Status.Reason == osm.ReasonNodeRegistered, nil
		}
	}
	h.eventually("the report of a machine whose Node was there completed", inferred("already"))

	// A Node registers under the machine's name; another machine gets its
	// nodeRef (its Node has another name).
	nodeSource.Add(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "joins"}})
	machineSource.Modify(&clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "noderef"},
		Status: clusterv1alpha1.MachineStatus{NodeRef: &corev1.ObjectReference{Name: "ip-10-0-0-1"}}})
	h.eventually("the report of the machine whose Node registered completed", inferred("joins"))
	h.eventually("the report of the machine that got its nodeRef completed", inferred("noderef"))

	// The others keep what the node said: the leader looked at them too.
	if r := reportOf("no-node"); r.Status.State != osm.BootStateProvisioning || r.Status.Reason != "" {
		t.Errorf("report of a machine without a Node: %s %q", r.Status.State, r.Status.Reason)
	}
	nodeSource.Add(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "failed"}})
	h.controller.reportQueue.Add(bootreports.SecretName("kube-system", "failed"))
	h.eventually("the failed report looked at", func() (bool, error) { return h.controller.reportQueue.Len() == 0, nil })
	if r := reportOf("failed"); r.Status.State != osm.BootStateFailed || r.Status.Reason != "" {
		t.Errorf("failed report of a machine with a Node: %s %q", r.Status.State, r.Status.Reason)
	}
}
