package server

import (
	"slices"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// publishClaimChanges tells API watchers of MDs whose Secret names another MD
// shares when the names may have changed hands (machinecontroller.Claims): an
// MD of those names came or went, or a payload Secret of them was written or
// deleted. MDs whose names nobody shares publish nothing more.
func publishClaimChanges(feed *changefeed.Feed, mds machinecontroller.Lister, mdInformer, payloadInformer cache.SharedIndexInformer) error {
	// touchPeers publishes the MDs sharing ref's names, but skip (whose own
	// change the feed's MD handler publishes).
	touchPeers := func(ref, skip machinecontroller.Ref) {
		peers, err := mds.SharingSecretNames(ref)
		if err != nil || len(peers) < 2 {
			return
		}
		for _, p := range peers {
			if machinecontroller.HasProfile(p) && machinecontroller.RefOf(p) != skip {
				feed.Publish(watch.Modified, p)
			}
		}
	}
	onMD := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if m, err := meta.Accessor(obj); err == nil {
			ref := machinecontroller.Ref{Namespace: m.GetNamespace(), Name: m.GetName()}
			touchPeers(ref, ref)
		}
	}
	onSecret := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if m, err := meta.Accessor(obj); err == nil {
			if owner, ok := machinecontroller.Owner(m); ok && slices.Contains(owner.DictatedSecretNames(), m.GetName()) {
				touchPeers(owner, machinecontroller.Ref{})
			}
		}
	}
	if _, err := mdInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onMD,
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*clusterv1alpha1.MachineDeployment)
			n, ok2 := cur.(*clusterv1alpha1.MachineDeployment)
			if ok1 && ok2 && (machinecontroller.HasProfile(o) != machinecontroller.HasProfile(n) || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)) {
				onMD(cur)
			}
		},
		DeleteFunc: onMD,
	}); err != nil {
		return err
	}
	_, err := payloadInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onSecret,
		UpdateFunc: func(old, cur any) {
			o, err1 := meta.Accessor(old)
			n, err2 := meta.Accessor(cur)
			if err1 != nil || err2 != nil {
				return
			}
			if ownerOf(o) != ownerOf(n) {
				onSecret(cur)
			}
		},
		DeleteFunc: onSecret,
	})
	return err
}

func ownerOf(obj metav1.Object) machinecontroller.Ref {
	ref, _ := machinecontroller.Owner(obj)
	return ref
}
