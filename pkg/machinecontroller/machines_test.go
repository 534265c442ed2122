package machinecontroller

import (
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func controlledBy(kind, name string, uid types.UID) []metav1.OwnerReference {
	return []metav1.OwnerReference{{Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}}
}

func testMachine(name string, owners []metav1.OwnerReference) *clusterv1alpha1.Machine {
	return &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: owners}}
}

func testMachineOwners(t *testing.T, objs ...runtime.Object) *MachineOwners {
	t.Helper()
	o := &MachineOwners{
		Machines:    NewMachineInformer(nil).GetIndexer(),
		MachineSets: NewMachineSetInformer(nil).GetIndexer(),
	}
	for _, obj := range objs {
		var err error
		switch obj.(type) {
		case *clusterv1alpha1.Machine:
			err = o.Machines.Add(obj)
		case *clusterv1alpha1.MachineSet:
			err = o.MachineSets.Add(obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return o
}

func TestMachineOwners(t *testing.T) {
	ms := &clusterv1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pool-1", UID: "ms-1",
		OwnerReferences: controlledBy("MachineDeployment", "pool", "md-1")}}
	orphanMS := &clusterv1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "loose", UID: "ms-2"}}
	o := testMachineOwners(t, ms, orphanMS,
		testMachine("pool-1-a", controlledBy("MachineSet", "pool-1", "ms-1")),
		testMachine("pool-1-b", controlledBy("MachineSet", "pool-1", "ms-1")),
		// A Machine of an earlier MachineSet of the same name.
		testMachine("stale", controlledBy("MachineSet", "pool-1", "ms-0")),
		testMachine("lonely", nil),
		testMachine("loose-a", controlledBy("MachineSet", "loose", "ms-2")),
		testMachine("gone-set", controlledBy("MachineSet", "gone", "ms-3")),
	)

	got, err := o.Owner("ns", "pool-1-a")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Ref{Namespace: "ns", Name: "pool"}); got.MachineDeployment != want || got.UID != "md-1" || got.Machine.Name != "pool-1-a" {
		t.Errorf("owner of pool-1-a = %+v, want %v (md-1)", got, want)
	}
	if _, err := o.Owner("ns", "missing"); !apierrors.IsNotFound(err) {
		t.Errorf("missing machine: %v, want NotFound", err)
	}
	for _, name := range []string{"stale", "lonely", "loose-a", "gone-set"} {
		if got, err := o.Owner("ns", name); err == nil || apierrors.IsNotFound(err) {
			t.Errorf("%s: owner %+v, err %v; want an error naming why it belongs to no MD", name, got, err)
		}
	}
	if !o.Exists("ns", "lonely") || o.Exists("ns", "missing") {
		t.Error("Exists disagrees with the cache")
	}

	machines, err := o.MachinesOf(Ref{Namespace: "ns", Name: "pool"})
	if err != nil {
		t.Fatal(err)
	}
	if len(machines) != 2 {
		t.Errorf("machines of pool: %d, want 2 (not the stale one)", len(machines))
	}
}

func TestMachineInformerKeepsOnlyWhatIsRead(t *testing.T) {
	m := testMachine("a", controlledBy("MachineSet", "s", "u"))
	m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "x"}}
	m.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(`{"cloudProvider":"aws"}`)}
	m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: "a"}
	obj, err := stripMachine(m)
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*clusterv1alpha1.Machine)
	if got.Spec.ProviderSpec.Value != nil || got.ManagedFields != nil {
		t.Errorf("spec or managed fields kept: %+v", got)
	}
	if got.Status.NodeRef == nil || len(got.OwnerReferences) != 1 {
		t.Errorf("node ref or owner lost: %+v", got)
	}
}
