package changefeed

import (
	"errors"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
)

func TestVersions(t *testing.T) {
	f := New(3)
	a := machinecontrollertest.MD("ns", "a", "osp", nil)
	b := machinecontrollertest.MD("ns", "b", "osp", nil)
	f.Publish(watch.Added, a)
	f.Publish(watch.Added, b)
	f.Publish(watch.Modified, a)
	if f.Version("ns", "a") != 3 || f.Version("ns", "b") != 2 || f.Current() != 3 {
		t.Fatalf("versions a=%d b=%d current=%d", f.Version("ns", "a"), f.Version("ns", "b"), f.Current())
	}
}

func TestSubscribe(t *testing.T) {
	f := New(3)
	md := machinecontrollertest.MD("ns", "a", "osp", nil)
	for range 5 {
		f.Publish(watch.Modified, md)
	}
	tests := []struct {
		name       string
		from       uint64
		wantReplay []uint64
		wantTooOld bool
	}{
		{name: "from now", from: 0},
		{name: "from the current version", from: 5},
		{name: "from a kept version", from: 3, wantReplay: []uint64{4, 5}},
		{name: "from the version before the oldest kept", from: 2, wantReplay: []uint64{3, 4, 5}},
		{name: "too old", from: 1, wantTooOld: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sub, _, err := f.Subscribe(tc.from)
			var tooOld *TooOldError
			if tc.wantTooOld {
				if !errors.As(err, &tooOld) {
					t.Fatalf("want TooOldError, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			var got []uint64
			for _, ev := range sub.Replay {
				got = append(got, ev.Seq)
			}
			if len(got) != len(tc.wantReplay) {
				t.Fatalf("replay %v, want %v", got, tc.wantReplay)
			}
			for i := range got {
				if got[i] != tc.wantReplay[i] {
					t.Fatalf("replay %v, want %v", got, tc.wantReplay)
				}
			}
		})
	}
}

func TestSlowSubscriberIsClosed(t *testing.T) {
	f := New(10)
	sub, _, _ := f.Subscribe(0)
	md := machinecontrollertest.MD("ns", "a", "osp", nil)
	for range subscriptionBuffer + 1 {
		f.Publish(watch.Modified, md)
	}
	n := 0
	for range sub.C() {
		n++
	}
	if n != subscriptionBuffer {
		t.Fatalf("got %d events before close, want %d", n, subscriptionBuffer)
	}
	sub.Close() // no panic on a closed subscription
}

func TestMachineDeploymentHandler(t *testing.T) {
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
		{name: "gains a profile", old: without, new: withProfile, want: watch.Added},
		{name: "loses its profile", old: withProfile, new: without, want: watch.Deleted},
		{name: "never had one", old: without, new: without},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := New(10)
			f.MachineDeploymentHandler().OnUpdate(tc.old, tc.new)
			var got watch.EventType
			if f.Current() == 1 {
				got = f.history[0].Type
			}
			if got != tc.want {
				t.Errorf("event %q, want %q", got, tc.want)
			}
		})
	}
}

func TestProfileHandlerTouchesItsUsersOnly(t *testing.T) {
	mds := machinecontrollertest.Lister{
		machinecontrollertest.MD("ns", "default-ns", "osp-ubuntu", nil),
		machinecontrollertest.MD("ns", "other-profile", "osp-flatcar", nil),
		machinecontrollertest.MD("ns", "other-ns", "osp-ubuntu", nil),
	}
	mds[2].Annotations[machinecontroller.AnnotationOSPNamespace] = "elsewhere"
	f := New(10)
	osp := &ospv1alpha1.OperatingSystemProfile{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "osp-ubuntu", ResourceVersion: "1"}}
	newer := osp.DeepCopy()
	newer.ResourceVersion = "2"
	var h cache.ResourceEventHandler = f.ProfileHandler(mds)
	h.OnUpdate(osp, osp) // resync: no event
	h.OnUpdate(osp, newer)
	if f.Current() != 1 || f.history[0].MD.Name != "default-ns" || f.history[0].Type != watch.Modified {
		t.Fatalf("events %+v", f.history)
	}
}

func TestMachineSetHandlerTouchesItsMachineDeployment(t *testing.T) {
	md := machinecontrollertest.MD("ns", "workers", "osp-ubuntu", nil)
	mds := machinecontrollertest.Lister{md, machinecontrollertest.MD("ns", "other", "osp-ubuntu", nil)}
	ms := &clusterv1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: "workers-abc", ResourceVersion: "1",
		Annotations:     map[string]string{machinecontroller.AnnotationMDRevision: "1"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(md, clusterv1alpha1.SchemeGroupVersion.WithKind("MachineDeployment"))},
	}}
	f := New(10)
	h := f.MachineSetHandler(mds)
	h.OnAdd(ms, false)
	scaled := ms.DeepCopy()
	scaled.ResourceVersion = "2"
	scaled.Status.Replicas = 3
	h.OnUpdate(ms, scaled) // status only: no event
	bumped := scaled.DeepCopy()
	bumped.Annotations[machinecontroller.AnnotationMDRevision] = "3"
	h.OnUpdate(scaled, bumped)
	orphan := ms.DeepCopy()
	orphan.OwnerReferences = nil
	h.OnAdd(orphan, false) // controlled by no MD: no event
	if f.Current() != 2 || f.history[0].MD.Name != "workers" || f.history[1].MD.Name != "workers" {
		t.Fatalf("events %+v", f.history)
	}
}
