package changefeed

import (
	"slices"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
)

// Claims are the changes of who has the Secret names several MDs share
// (machines.Claims), for the MDs sharing them: with the MD informer
// (Combine it with MachineDeployments), an MD of those names came, went, gained
// or lost its profile or started deleting; with the payload Secret informer, a
// Secret of those names was written, changed hands or was deleted. MDs whose
// names nobody shares get nothing more.
func Claims(mds machines.Lister) (onMDs, onSecrets Changes) {
	// peers adds the MDs sharing ref's names, but skip (whose own change the
	// MD stream publishes).
	peers := func(b *Batch, ref, skip machinecontroller.Ref) {
		sharing, err := mds.SharingSecretNames(ref)
		if err != nil || len(sharing) < 2 {
			return
		}
		for _, p := range sharing {
			if machinecontroller.RefOf(p) != skip {
				b.Add(watch.Modified, p)
			}
		}
	}
	onMD := func(b *Batch, obj any) {
		if m, err := meta.Accessor(tombstone(obj)); err == nil {
			ref := machinecontroller.Ref{Namespace: m.GetNamespace(), Name: m.GetName()}
			peers(b, ref, ref)
		}
	}
	onSecret := func(b *Batch, obj any) {
		if m, err := meta.Accessor(tombstone(obj)); err == nil {
			if owner, ok := machinecontroller.Owner(m); ok && slices.Contains(owner.DictatedSecretNames(), m.GetName()) {
				peers(b, owner, machinecontroller.Ref{})
			}
		}
	}
	onMDs = Changes{
		Add: onMD,
		Update: func(b *Batch, oldObj, obj any) {
			o, ok1 := oldObj.(*clusterv1alpha1.MachineDeployment)
			n, ok2 := obj.(*clusterv1alpha1.MachineDeployment)
			if ok1 && ok2 && (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) {
				onMD(b, obj)
			}
		},
		Delete: onMD,
	}
	onSecrets = Changes{
		Add: onSecret,
		Update: func(b *Batch, oldObj, obj any) {
			o, err1 := meta.Accessor(oldObj)
			n, err2 := meta.Accessor(obj)
			if err1 != nil || err2 != nil {
				return
			}
			oldOwner, _ := machinecontroller.Owner(o)
			newOwner, _ := machinecontroller.Owner(n)
			if oldOwner != newOwner {
				onSecret(b, obj)
			}
		},
		Delete: onSecret,
	}
	return onMDs, onSecrets
}

// Combine returns the changes of both, a's first, in one batch.
func Combine(a, b Changes) Changes {
	both := func(x, y func(*Batch, any)) func(*Batch, any) {
		return func(bt *Batch, obj any) {
			if x != nil {
				x(bt, obj)
			}
			if y != nil {
				y(bt, obj)
			}
		}
	}
	return Changes{
		Add: both(a.Add, b.Add),
		Update: func(bt *Batch, old, obj any) {
			if a.Update != nil {
				a.Update(bt, old, obj)
			}
			if b.Update != nil {
				b.Update(bt, old, obj)
			}
		},
		Delete: both(a.Delete, b.Delete),
	}
}
