package machines_test

import (
	"slices"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
)

// The fake Lister of machinecontrollertest is a Lister.
var _ machines.Lister = machinecontrollertest.Lister(nil)

// A Machine belongs to the MachineDeployment that controls its MachineSet —
// the MachineSet of the owner reference's uid — and to no other.
func TestMachineReader(t *testing.T) {
	md := machinecontrollertest.MD("team", "pool", "osp-ubuntu", nil)
	other := machinecontrollertest.MD("team", "other", "osp-ubuntu", nil)
	ms := machinecontrollertest.MachineSet(md, "pool-5d8f7")
	oldMS := machinecontrollertest.MachineSet(md, "pool-1a2b3")
	otherMS := machinecontrollertest.MachineSet(other, "other-6c9d4")
	m1 := machinecontrollertest.Machine(ms, "pool-5d8f7-x2k4q")
	m2 := machinecontrollertest.Machine(oldMS, "pool-1a2b3-p7w2m")
	foreign := machinecontrollertest.Machine(otherMS, "other-6c9d4-abcde")
	stale := machinecontrollertest.Machine(ms, "pool-5d8f7-stale")
	stale.OwnerReferences[0].UID = "a-machineset-deleted-since"
	orphan := machinecontrollertest.Machine(ms, "by-hand")
	orphan.OwnerReferences = nil

	cached := informers.NewMachines(nil).GetIndexer()
	sets := informers.NewMachineSets(nil).GetIndexer()
	for _, obj := range []any{m1, m2, foreign, stale, orphan} {
		if err := cached.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, obj := range []any{ms, oldMS, otherMS} {
		if err := sets.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	r := machines.NewMachineReader(cached, sets, nil)

	pool := machinecontroller.Ref{Namespace: "team", Name: "pool"}
	for _, tc := range []struct {
		machine *clusterv1alpha1.Machine
		want    machinecontroller.Ref
		ok      bool
	}{
		{m1, pool, true},
		{m2, pool, true},
		{foreign, machinecontroller.Ref{Namespace: "team", Name: "other"}, true},
		{stale, machinecontroller.Ref{}, false},
		{orphan, machinecontroller.Ref{}, false},
	} {
		if got, ok := r.MachineDeploymentOf(tc.machine); got != tc.want || ok != tc.ok {
			t.Errorf("%s: owner %v, %v; want %v, %v", tc.machine.Name, got, ok, tc.want, tc.ok)
		}
	}

	list, err := r.OfMachineDeployment(pool)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range list {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	if want := []string{m2.Name, m1.Name}; !slices.Equal(names, want) {
		t.Errorf("machines of %s: %v, want %v", pool, names, want)
	}

	if got, err := r.Get("team", m1.Name); err != nil || got != m1 {
		t.Errorf("Get: %v, %v", got, err)
	}
	if _, err := r.Get("team", "missing"); !apierrors.IsNotFound(err) {
		t.Errorf("Get of a missing machine: %v, want NotFound", err)
	}
}

// A Machine has a Node once machine-controller set its nodeRef, or once a
// Node of one of its names exists.
func TestNodeOf(t *testing.T) {
	m := machinecontrollertest.Machine(machinecontrollertest.MachineSet(machinecontrollertest.MD("ns", "md", "", nil), "md-1"), "md-1-abcde")
	nodes := informers.NewNodes(nil).GetIndexer()
	r := machines.NewMachineReader(nil, nil, nodes)
	if name, ok := r.NodeOf(m); ok {
		t.Errorf("a new machine has node %q", name)
	}
	if err := nodes.Add(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "md-1-abcde"}}); err != nil {
		t.Fatal(err)
	}
	if name, ok := r.NodeOf(m); !ok || name != "md-1-abcde" {
		t.Errorf("node %q, %v; want md-1-abcde", name, ok)
	}
	m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: "ip-10-0-0-7.ec2.internal"}
	if name, ok := r.NodeOf(m); !ok || name != "ip-10-0-0-7.ec2.internal" {
		t.Errorf("node %q, %v; want the nodeRef's", name, ok)
	}
}
