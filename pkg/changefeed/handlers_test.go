package changefeed

import (
	"strings"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
)

func TestMachineDeploymentChanges(t *testing.T) {
	withProfile := machinecontrollertest.MD("ns", "a", "osp", nil)
	statusOnly := withProfile.DeepCopy()
	statusOnly.ResourceVersion = "2"
	statusOnly.Status.Replicas = 2
	relabelled := withProfile.DeepCopy()
	relabelled.Labels = map[string]string{"pool": "x"}
	without := machinecontrollertest.MD("ns", "a", "", nil)
	tests := []struct {
		name     string
		old, new *clusterv1alpha1.MachineDeployment
		want     watch.EventType // "" for none
	}{
		{name: "status only", old: withProfile, new: statusOnly},
		{name: "labels", old: withProfile, new: relabelled, want: watch.Modified},
		// An MD that names no profile has its OS's default: still an output.
		{name: "names a profile", old: without, new: withProfile, want: watch.Modified},
		{name: "names none any more", old: withProfile, new: without, want: watch.Modified},
		{name: "names none, unchanged", old: without, new: without},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b Batch
			MachineDeployments().Update(&b, tc.old, tc.new)
			var got watch.EventType
			if len(b.events) == 1 {
				got = b.events[0].Type
			}
			if got != tc.want || len(b.events) > 1 {
				t.Errorf("events %+v, want one %q", b.events, tc.want)
			}
		})
	}
}

func TestProfileChangesTouchItsUsersOnly(t *testing.T) {
	mds := machinecontrollertest.Lister{
		machinecontrollertest.MD("ns", "default-ns", "osp-ubuntu", nil),
		machinecontrollertest.MD("ns", "other-profile", "osp-flatcar", nil),
		machinecontrollertest.MD("ns", "other-ns", "osp-ubuntu", nil),
	}
	mds[2].Annotations[machinecontroller.AnnotationOSPNamespace] = "elsewhere"
	osp := &ospv1alpha1.OperatingSystemProfile{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "osp-ubuntu", ResourceVersion: "1"}}
	newer := osp.DeepCopy()
	newer.ResourceVersion = "2"
	c := Profiles(mds)
	var b Batch
	c.Update(&b, osp, osp) // resync: no event
	c.Update(&b, osp, newer)
	if len(b.events) != 1 || b.events[0].MD.Name != "default-ns" || b.events[0].Type != watch.Modified {
		t.Fatalf("events %+v", b.events)
	}
}

func TestMachineSetChangesTouchItsMachineDeployment(t *testing.T) {
	md := machinecontrollertest.MD("ns", "workers", "osp-ubuntu", nil)
	mds := machinecontrollertest.Lister{md, machinecontrollertest.MD("ns", "other", "osp-ubuntu", nil)}
	ms := &clusterv1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: "workers-abc", ResourceVersion: "1",
		Annotations:     map[string]string{machinecontroller.AnnotationMDRevision: "1"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(md, clusterv1alpha1.SchemeGroupVersion.WithKind("MachineDeployment"))},
	}}
	c := MachineSets(mds)
	var b Batch
	c.Add(&b, ms)
	scaled := ms.DeepCopy()
	scaled.ResourceVersion = "2"
	scaled.Status.Replicas = 3
	c.Update(&b, ms, scaled) // status only: no event
	bumped := scaled.DeepCopy()
	bumped.Annotations[machinecontroller.AnnotationMDRevision] = "3"
	c.Update(&b, scaled, bumped)
	orphan := ms.DeepCopy()
	orphan.OwnerReferences = nil
	c.Add(&b, orphan) // controlled by no MD: no event
	if len(b.events) != 2 || b.events[0].MD.Name != "workers" || b.events[1].MD.Name != "workers" {
		t.Fatalf("events %+v", b.events)
	}
}

// Objects written for an MD (its tokens) touch their owner when added,
// deleted (tombstones too) or changed as changed says; others touch nothing.
func TestOwnedChangesTouchTheOwner(t *testing.T) {
	md := machinecontrollertest.MD("ns", "workers", "osp-ubuntu", nil)
	mds := machinecontrollertest.Lister{md}
	owned := func(ref machinecontroller.Ref, value string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "t-" + ref.Name, Labels: ref.Labels("p"), Annotations: ref.Annotations()},
			Data:       map[string][]byte{"v": []byte(value)},
		}
	}
	ref := machinecontroller.Ref{Namespace: "ns", Name: "workers"}
	tok := owned(ref, "one")
	changed := func(old, obj any) bool {
		return string(old.(*corev1.Secret).Data["v"]) != string(obj.(*corev1.Secret).Data["v"])
	}
	c := Owned(mds, changed)
	var b Batch
	c.Add(&b, tok)
	c.Update(&b, tok, tok) // no change of value: no event
	c.Update(&b, tok, owned(ref, "two"))
	c.Delete(&b, cache.DeletedFinalStateUnknown{Key: "kube-system/t-workers", Obj: tok})
	c.Add(&b, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "foreign"}}) // no owner
	c.Add(&b, owned(machinecontroller.Ref{Namespace: "ns", Name: "gone"}, "x"))                         // owner not found
	if len(b.events) != 3 {
		t.Fatalf("%d events, want 3: %+v", len(b.events), b.events)
	}
	for _, ev := range b.events {
		if ev.Type != watch.Modified || ev.MD != md {
			t.Errorf("event %s of %v, want MODIFIED of ns/workers", ev.Type, ev.MD)
		}
	}
}

func TestMachineReportsAreMarked(t *testing.T) {
	md := machinecontrollertest.MD("ns", "workers", "osp-ubuntu", nil)
	ref := machinecontroller.Ref{Namespace: "ns", Name: "workers"}
	report := func(state string) *metav1.PartialObjectMetadata {
		labels := ref.Labels("boot-report")
		labels["state"] = state
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "cloud-init-settings", Name: "r",
			Labels: labels, Annotations: ref.Annotations()}}
	}
	stateChanged := func(old, obj any) bool {
		return old.(*metav1.PartialObjectMetadata).Labels["state"] != obj.(*metav1.PartialObjectMetadata).Labels["state"]
	}
	c := MachineReports(machinecontrollertest.Lister{md}, stateChanged)
	var b Batch
	b.Add(watch.Modified, md) // an event of another kind, left as it is
	c.Add(&b, report("Provisioning"))
	c.Update(&b, report("Provisioning"), report("Provisioning")) // a new step: nothing
	c.Update(&b, report("Provisioning"), report("Failed"))
	c.Delete(&b, report("Failed"))
	if len(b.events) != 4 {
		t.Fatalf("%d events, want 4: %+v", len(b.events), b.events)
	}
	for i, ev := range b.events {
		if ev.Machines != (i > 0) || ev.MD != md {
			t.Errorf("event %d: machines=%v of %v", i, ev.Machines, ev.MD)
		}
	}
}

// TestOverlayChanges: an overlay's spec change touches the MDs it selected
// and those it selects, once each; a status update touches none.
func TestOverlayChanges(t *testing.T) {
	a, b, c := machinecontrollertest.MD("ns", "a", "osp", nil), machinecontrollertest.MD("ns", "b", "osp", nil), machinecontrollertest.MD("ns", "c", "osp", nil)
	selected := func(o *overlaysv1alpha1.OperatingSystemProfileOverlay) ([]*clusterv1alpha1.MachineDeployment, error) {
		if o.Generation == 1 {
			return []*clusterv1alpha1.MachineDeployment{a, b}, nil
		}
		return []*clusterv1alpha1.MachineDeployment{b, c}, nil
	}
	o := &overlaysv1alpha1.OperatingSystemProfileOverlay{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "o", Generation: 1, ResourceVersion: "1"}}
	status := o.DeepCopy()
	status.ResourceVersion, status.Status.MachineDeployments = "2", 2
	spec := status.DeepCopy()
	spec.ResourceVersion, spec.Generation = "3", 2
	changes := Overlays(selected)
	for _, tc := range []struct {
		name string
		do   func(*Batch)
		want []string
	}{
		{"added", func(bt *Batch) { changes.Add(bt, o) }, []string{"a", "b"}},
		{"status update", func(bt *Batch) { changes.Update(bt, o, status) }, nil},
		{"spec update", func(bt *Batch) { changes.Update(bt, status, spec) }, []string{"a", "b", "c"}},
		{"deleted, as a relist finds it", func(bt *Batch) { changes.Delete(bt, cache.DeletedFinalStateUnknown{Key: "ns/o", Obj: spec}) }, []string{"b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bt Batch
			tc.do(&bt)
			var got []string
			for _, ev := range bt.events {
				if ev.Type != watch.Modified {
					t.Errorf("event %s", ev.Type)
				}
				got = append(got, ev.MD.Name)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("touched %v, want %v", got, tc.want)
			}
		})
	}
}
