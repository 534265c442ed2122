package changefeed

import (
	"maps"
	"strconv"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
)

// Batch collects the events of one notification of a stream's informer.
type Batch struct {
	events []Event
}

// Add adds an event of md.
func (b *Batch) Add(typ watch.EventType, md *clusterv1alpha1.MachineDeployment) {
	b.events = append(b.events, Event{Type: typ, MD: md})
}

// Update adds the update of an MD from old to md.
func (b *Batch) Update(old, md *clusterv1alpha1.MachineDeployment) {
	b.events = append(b.events, Event{Type: watch.Modified, MD: md, Old: old})
}

// Changes says what one notification of an informer changes: a nil function
// changes nothing. old and obj are the informer's (read-only); a deleted obj
// may be a cache.DeletedFinalStateUnknown.
type Changes struct {
	Add    func(b *Batch, obj any)
	Update func(b *Batch, old, obj any)
	Delete func(b *Batch, obj any)
}

// Handler returns the event handler of the stream's informer: it publishes
// what c makes of each notification, with the notification's revision, then
// records the notification as processed, in one step, so that the stream's
// position never passes a change before its events are published.
func (s *Stream) Handler(c Changes) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			var b Batch
			if c.Add != nil {
				c.Add(&b, obj)
			}
			s.processed(obj, false, &b)
		},
		UpdateFunc: func(old, obj any) {
			var b Batch
			if c.Update != nil {
				c.Update(&b, old, obj)
			}
			s.processed(obj, false, &b)
		},
		DeleteFunc: func(obj any) {
			var b Batch
			if c.Delete != nil {
				c.Delete(&b, obj)
			}
			s.processed(obj, true, &b)
		},
	}
}

func (s *Stream) processed(obj any, deleted bool, b *Batch) {
	key, rev, revKnown := keyAndRevision(obj)
	f := s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	published := rev
	if !revKnown {
		// A deletion a list found: it happened before the list's revision.
		published = s.since
	}
	for i := range b.events {
		b.events[i].Stream, b.events[i].Rev = s.index, published
	}
	f.publishLocked(b.events)
	s.observedLocked(key, rev, deleted, revKnown)
}

// keyAndRevision returns the informer key of obj and its resourceVersion;
// revKnown is false for a cache.DeletedFinalStateUnknown.
func keyAndRevision(obj any) (key string, rev uint64, revKnown bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Key, 0, false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", 0, false
	}
	key = m.GetName()
	if ns := m.GetNamespace(); ns != "" {
		key = ns + "/" + key
	}
	rev, err = strconv.ParseUint(m.GetResourceVersion(), 10, 64)
	return key, rev, err == nil
}

func tombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

// MachineDeployments are the changes of the MD informer: adds, deletes and the
// updates that can change the rendered output or the object's labels. Every
// MD has an output (its profile named or defaulted, or the error that says
// why it has none). Status-only updates (replica counts, which
// machine-controller writes often) are not changes.
func MachineDeployments() Changes {
	return Changes{
		Add: func(b *Batch, obj any) {
			if md, ok := obj.(*clusterv1alpha1.MachineDeployment); ok {
				b.Add(watch.Added, md)
			}
		},
		Update: func(b *Batch, oldObj, newObj any) {
			old, ok1 := oldObj.(*clusterv1alpha1.MachineDeployment)
			md, ok2 := newObj.(*clusterv1alpha1.MachineDeployment)
			if ok1 && ok2 && outputMayDiffer(old, md) {
				b.Update(old, md)
			}
		},
		Delete: func(b *Batch, obj any) {
			if md, ok := tombstone(obj).(*clusterv1alpha1.MachineDeployment); ok {
				b.Add(watch.Deleted, md)
			}
		},
	}
}

func outputMayDiffer(old, md *clusterv1alpha1.MachineDeployment) bool {
	return old.UID != md.UID ||
		!maps.Equal(old.Annotations, md.Annotations) ||
		!maps.Equal(old.Labels, md.Labels) ||
		!equality.Semantic.DeepEqual(old.Spec, md.Spec)
}

// Profiles are the changes of the OSP informer: a Modified event for every MD
// that uses a profile when the profile is added, changed or deleted.
func Profiles(mds machines.Lister) Changes {
	touch := func(b *Batch, obj any) {
		osp, ok := tombstone(obj).(*ospv1alpha1.OperatingSystemProfile)
		if !ok {
			return
		}
		users, err := mds.UsingProfile(machinecontroller.Profile{Namespace: osp.Namespace, Name: osp.Name})
		if err != nil {
			klog.ErrorS(err, "Failed to list machinedeployments for a profile change", "profile", klog.KObj(osp))
			return
		}
		for _, md := range users {
			b.Add(watch.Modified, md)
		}
	}
	return Changes{
		Add: touch,
		Update: func(b *Batch, oldObj, newObj any) {
			old, ok1 := oldObj.(*ospv1alpha1.OperatingSystemProfile)
			osp, ok2 := newObj.(*ospv1alpha1.OperatingSystemProfile)
			// Resyncs deliver the same object again: not a change.
			if ok1 && ok2 && old.ResourceVersion == osp.ResourceVersion {
				return
			}
			touch(b, newObj)
		},
		Delete: touch,
	}
}

// MachineSets are the changes of the MachineSet informer: a Modified event for
// the MD that controls a MachineSet when the MachineSet is added, deleted, or
// changes its revision or template (it holds the template of one of the MD's
// revisions).
func MachineSets(mds machines.Lister) Changes {
	touch := func(b *Batch, obj any) {
		ms, ok := tombstone(obj).(*clusterv1alpha1.MachineSet)
		if !ok {
			return
		}
		if ref, ok := machinecontroller.MachineDeploymentOf(ms); ok {
			touchMD(b, mds, ref)
		}
	}
	return Changes{
		Add: touch,
		Update: func(b *Batch, oldObj, newObj any) {
			old, ok1 := oldObj.(*clusterv1alpha1.MachineSet)
			ms, ok2 := newObj.(*clusterv1alpha1.MachineSet)
			if ok1 && ok2 && old.Annotations[machinecontroller.AnnotationMDRevision] == ms.Annotations[machinecontroller.AnnotationMDRevision] &&
				equality.Semantic.DeepEqual(old.Spec.Template.Spec, ms.Spec.Template.Spec) {
				return
			}
			touch(b, newObj)
		},
		Delete: touch,
	}
}

// Owned are the changes of an informer of objects written for MDs (see
// machinecontroller.Owner), such as their tokens: a Modified event for the
// owner when one is added or deleted, or updated in a way changed says its
// output may see (nil: every update).
func Owned(mds machines.Lister, changed func(old, obj any) bool) Changes {
	touch := func(b *Batch, obj any) {
		if o, ok := tombstone(obj).(metav1.Object); ok {
			if ref, ok := machinecontroller.Owner(o); ok {
				touchMD(b, mds, ref)
			}
		}
	}
	return Changes{
		Add: touch,
		Update: func(b *Batch, old, obj any) {
			if changed == nil || changed(old, obj) {
				touch(b, obj)
			}
		},
		Delete: touch,
	}
}

// MachineReports are the changes of the informer of the boot reports of
// MDs' machines: as Owned, with the events marked Machines (only the
// OperatingSystemConfig's machine summary reads reports). changed says
// which updates the summary sees: a report's new step is not a change, its
// new state is.
func MachineReports(mds machines.Lister, changed func(old, obj any) bool) Changes {
	c := Owned(mds, changed)
	mark := func(b *Batch, from int) {
		for i := from; i < len(b.events); i++ {
			b.events[i].Machines = true
		}
	}
	return Changes{
		Add: func(b *Batch, obj any) {
			n := len(b.events)
			c.Add(b, obj)
			mark(b, n)
		},
		Update: func(b *Batch, old, obj any) {
			n := len(b.events)
			c.Update(b, old, obj)
			mark(b, n)
		},
		Delete: func(b *Batch, obj any) {
			n := len(b.events)
			c.Delete(b, obj)
			mark(b, n)
		},
	}
}

// touchMD adds a Modified event of ref's MD when it exists.
func touchMD(b *Batch, mds machines.Lister, ref machinecontroller.Ref) {
	if md, err := mds.Get(ref.Namespace, ref.Name); err == nil {
		b.Add(watch.Modified, md)
	}
}

// ProfileUsers lists every MD (each has an output), for changes every
// output depends on (the cluster facts).
func ProfileUsers(mds machines.Lister) ([]*clusterv1alpha1.MachineDeployment, error) {
	return mds.List("", labels.Everything())
}

// Overlays are the changes of the OperatingSystemProfileOverlay informer: a
// Modified event for every MD an overlay selected before or selects after it
// is added, deleted or changed in its spec (a new generation) or labels; a
// status update is no change. selected returns the MDs an overlay selects
// (overlays.Selector.MachineDeployments).
func Overlays(selected func(o *overlaysv1alpha1.OperatingSystemProfileOverlay) ([]*clusterv1alpha1.MachineDeployment, error)) Changes {
	touch := func(b *Batch, seen map[string]bool, obj any) {
		o, ok := tombstone(obj).(*overlaysv1alpha1.OperatingSystemProfileOverlay)
		if !ok {
			return
		}
		mds, err := selected(o)
		if err != nil {
			klog.ErrorS(err, "Failed to list machinedeployments for an overlay change", "overlay", klog.KObj(o))
			return
		}
		for _, md := range mds {
			if key := md.Namespace + "/" + md.Name; !seen[key] {
				seen[key] = true
				b.Add(watch.Modified, md)
			}
		}
	}
	return Changes{
		Add:    func(b *Batch, obj any) { touch(b, map[string]bool{}, obj) },
		Delete: func(b *Batch, obj any) { touch(b, map[string]bool{}, obj) },
		Update: func(b *Batch, oldObj, newObj any) {
			old, ok1 := oldObj.(*overlaysv1alpha1.OperatingSystemProfileOverlay)
			o, ok2 := newObj.(*overlaysv1alpha1.OperatingSystemProfileOverlay)
			if ok1 && ok2 && old.Generation == o.Generation && maps.Equal(old.Labels, o.Labels) {
				return
			}
			seen := map[string]bool{}
			touch(b, seen, oldObj)
			touch(b, seen, newObj)
		},
	}
}
