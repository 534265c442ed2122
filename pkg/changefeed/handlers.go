package changefeed

import (
	"maps"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// MachineDeploymentHandler publishes MD adds, deletes and the updates that can
// change the rendered output or the object's labels. Only MDs that name a
// profile have an output: gaining the annotation is an add, losing it a delete.
// Status-only updates (replica counts, which machine-controller writes often)
// are not changes.
func (f *Feed) MachineDeploymentHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if md, ok := obj.(*clusterv1alpha1.MachineDeployment); ok && machinecontroller.HasProfile(md) {
				f.Publish(watch.Added, md)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*clusterv1alpha1.MachineDeployment)
			md, ok2 := newObj.(*clusterv1alpha1.MachineDeployment)
			if !ok1 || !ok2 {
				return
			}
			switch had, has := machinecontroller.HasProfile(old), machinecontroller.HasProfile(md); {
			case had && !has:
				f.Publish(watch.Deleted, old)
			case !had && has:
				f.Publish(watch.Added, md)
			case has && outputMayDiffer(old, md):
				f.PublishUpdate(old, md)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if md, ok := obj.(*clusterv1alpha1.MachineDeployment); ok && machinecontroller.HasProfile(md) {
				f.Publish(watch.Deleted, md)
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

// ProfileHandler publishes a Modified event for every MD that uses a profile when
// the profile is added, changed or deleted.
func (f *Feed) ProfileHandler(mds machinecontroller.Lister) cache.ResourceEventHandler {
	touch := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		osp, ok := obj.(*ospv1alpha1.OperatingSystemProfile)
		if !ok {
			return
		}
		users, err := mds.UsingProfile(machinecontroller.Profile{Namespace: osp.Namespace, Name: osp.Name})
		if err != nil {
			klog.ErrorS(err, "Failed to list machinedeployments for a profile change", "profile", klog.KObj(osp))
			return
		}
		for _, md := range users {
			f.Publish(watch.Modified, md)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: touch,
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*ospv1alpha1.OperatingSystemProfile)
			osp, ok2 := newObj.(*ospv1alpha1.OperatingSystemProfile)
			// Resyncs deliver the same object again: not a change.
			if ok1 && ok2 && old.ResourceVersion == osp.ResourceVersion {
				return
			}
			touch(newObj)
		},
		DeleteFunc: touch,
	}
}

// TouchAll publishes a Modified event for every MD, for inputs shared by all of
// them (cluster CA, server URL, shared tokens).
func (f *Feed) TouchAll(mds machinecontroller.Lister) error {
	all, err := mds.List("", labels.Everything())
	if err != nil {
		return err
	}
	for _, md := range all {
		if machinecontroller.HasProfile(md) {
			f.Publish(watch.Modified, md)
		}
	}
	return nil
}

// MachineSetHandler publishes a Modified event for the MD that controls a
// MachineSet when the MachineSet is added, changed or deleted: it holds the
// template of one of the MD's revisions.
func (f *Feed) MachineSetHandler(mds machinecontroller.Lister) cache.ResourceEventHandler {
	touch := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		ms, ok := obj.(*clusterv1alpha1.MachineSet)
		if !ok {
			return
		}
		ref, ok := machinecontroller.MachineDeploymentOf(ms)
		if !ok {
			return
		}
		if md, err := mds.Get(ref.Namespace, ref.Name); err == nil && machinecontroller.HasProfile(md) {
			f.Publish(watch.Modified, md)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: touch,
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*clusterv1alpha1.MachineSet)
			ms, ok2 := newObj.(*clusterv1alpha1.MachineSet)
			// Only a revision or template change can change an output.
			if ok1 && ok2 && old.Annotations[machinecontroller.AnnotationMDRevision] == ms.Annotations[machinecontroller.AnnotationMDRevision] &&
				equality.Semantic.DeepEqual(old.Spec.Template.Spec, ms.Spec.Template.Spec) {
				return
			}
			touch(newObj)
		},
		DeleteFunc: touch,
	}
}
