package syncer

import (
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

type handler struct {
	informer     cache.SharedInformer
	registration cache.ResourceEventHandlerRegistration
}

// addHandlers registers the syncer on every informer it reacts to.
func (c *Controller) addHandlers() ([]handler, error) {
	type pair struct {
		informer cache.SharedInformer
		funcs    cache.ResourceEventHandler
	}
	pairs := []pair{
		{c.cfg.MachineDeployments, cache.ResourceEventHandlerFuncs{
			AddFunc:    c.onMachineDeployment,
			UpdateFunc: onChange(c.onMachineDeployment),
			DeleteFunc: c.onMachineDeployment,
		}},
		{c.cfg.Profiles, cache.ResourceEventHandlerFuncs{
			AddFunc:    c.onProfile,
			UpdateFunc: onChange(c.onProfile),
			DeleteFunc: c.onProfile,
		}},
		{c.cfg.Overlays, c.overlayHandler()},
		// A revision's template (the syncer renders from it) appearing or changing.
		{c.cfg.MachineSets, cache.ResourceEventHandlerFuncs{
			AddFunc:    c.onMachineSet,
			UpdateFunc: onChange(c.onMachineSet),
			DeleteFunc: c.onMachineSet,
		}},
		// A Machine that joined or went may let its MD shed what it had in
		// the compatibility mode.
		{c.cfg.MachineInformer, cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(old, cur any) {
				o, ok1 := old.(*clusterv1alpha1.Machine)
				n, ok2 := cur.(*clusterv1alpha1.Machine)
				if ok1 && ok2 && (o.Status.NodeRef == nil) != (n.Status.NodeRef == nil) {
					c.onMachine(cur)
				}
			},
			DeleteFunc: c.onMachine,
		}},
		// Our own objects: someone else changing or deleting one must be repaired.
		{c.cfg.Tokens.Informer(), ownedHandler(c.onOwned)},
		{c.cfg.Tokens.FetchInformer(), ownedHandler(c.onOwned)},
		// A payload Secret gone lets another MD of the same names take them.
		{c.cfg.Payloads.Informer(), cache.ResourceEventHandlerFuncs{
			UpdateFunc: onChange(c.onOwned),
			DeleteFunc: c.onPayloadDeleted,
		}},
		{c.owned.ServiceAccounts, ownedHandler(c.onOwned)},
		{c.owned.Roles, ownedHandler(c.onOwnedAccess)},
		{c.owned.RoleBindings, ownedHandler(c.onOwnedAccess)},
	}
	for _, m := range managedNamespaces {
		pairs = append(pairs, pair{c.owned.Namespaces[m.name], cache.ResourceEventHandlerFuncs{
			AddFunc:    c.onNamespace,
			UpdateFunc: func(_, cur any) { c.onNamespace(cur) }, // rare; resyncs are off
			DeleteFunc: c.onNamespace,
		}})
	}
	if c.reportsEnabled() {
		pairs = append(pairs,
			// A report goes with its Machine.
			// And is completed when its Node registers.
			pair{c.cfg.MachineInformer, cache.ResourceEventHandlerFuncs{DeleteFunc: c.onMachineDeleted, UpdateFunc: c.onMachineNodeRef}},
			// Every report once per leadership, then as it changes to
			// Provisioning (its Node may be there already).
			pair{c.cfg.BootReports.Informer(), cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
				if m, ok := obj.(metav1.Object); ok {
					c.reportQueue.Add(m.GetName())
				}
			}, UpdateFunc: c.onReportUpdated}})
		if c.completesFromNodes() {
			pairs = append(pairs, pair{c.cfg.Nodes, cache.ResourceEventHandlerFuncs{AddFunc: c.onNodeAdded}})
		}
	}
	var handlers []handler
	for _, p := range pairs {
		if p.informer == nil {
			continue
		}
		r, err := p.informer.AddEventHandler(p.funcs)
		if err != nil {
			return handlers, fmt.Errorf("syncer: failed to add event handler: %w", err)
		}
		handlers = append(handlers, handler{p.informer, r})
	}
	return handlers, nil
}

func (c *Controller) removeHandlers(handlers []handler) {
	for _, h := range handlers {
		// Removing a handler only fails for a foreign registration.
		_ = h.informer.RemoveEventHandler(h.registration)
	}
}

// onChange turns an update handler into one that skips periodic resyncs of
// unchanged objects; the syncer has its own resync.
func onChange(f func(any)) func(old, cur any) {
	return func(old, cur any) {
		o, err1 := meta.Accessor(old)
		n, err2 := meta.Accessor(cur)
		if err1 == nil && err2 == nil && o.GetResourceVersion() == n.GetResourceVersion() {
			return
		}
		f(cur)
	}
}

// onMachineDeployment enqueues the MD and the MDs whose Secret names it
// shares: one of them owns the names, and an MD coming or going can change
// which (see machines.Claims).
func (c *Controller) onMachineDeployment(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	c.queue.Add(key)
	if ref, err := machinecontroller.ParseRef(key); err == nil {
		c.enqueuePeers(ref)
		c.enqueueOverlaysOf(ref.Namespace)
	}
}

// onPayloadDeleted enqueues the owner of a deleted Secret and every MD that
// shares its name.
func (c *Controller) onPayloadDeleted(obj any) {
	if ref, ok := ownerOf(obj); ok {
		c.enqueue(ref)
		c.enqueuePeers(ref)
	}
}

// enqueuePeers enqueues the other MDs whose dictated Secret names are ref's.
func (c *Controller) enqueuePeers(ref machinecontroller.Ref) {
	peers, err := c.mds.SharingSecretNames(ref)
	if err != nil {
		return
	}
	for _, p := range peers {
		if peer := machinecontroller.RefOf(p); peer != ref {
			c.enqueue(peer)
		}
	}
}

// onProfile enqueues every MachineDeployment using the profile, so a new
// profile version is rolled out without waiting for an MD event.
func (c *Controller) onProfile(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	osp, ok := obj.(*ospv1alpha1.OperatingSystemProfile)
	if !ok {
		return
	}
	mds, err := c.mds.UsingProfile(machinecontroller.Profile{Namespace: osp.Namespace, Name: osp.Name})
	if err != nil {
		return
	}
	for _, md := range mds {
		c.enqueue(machinecontroller.Ref{Namespace: md.Namespace, Name: md.Name})
	}
	// An overlay's templates may fail, or no longer, with the new profile.
	c.enqueueAllOverlays(overlayStatusDelay)
}

// ownedHandler calls f when an object we wrote changes or goes.
func ownedHandler(f func(any)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{UpdateFunc: onChange(f), DeleteFunc: f}
}

// onOwnedAccess enqueues the MachineDeployment of a fetch Role or RoleBinding
// and makes its next sync read them back instead of trusting what it wrote.
func (c *Controller) onOwnedAccess(obj any) {
	if ref, ok := ownerOf(obj); ok {
		c.rbac.Invalidate(ref)
		c.enqueue(ref)
	}
}

// onNamespace wakes the namespace worker on any change of a managed namespace.
func (c *Controller) onNamespace(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if m, err := meta.Accessor(obj); err == nil {
		if _, managed := c.owned.Namespaces[m.GetName()]; managed {
			c.namespaceQueue.Add(m.GetName())
		}
	}
}

func (c *Controller) onOwned(obj any) {
	if ref, ok := ownerOf(obj); ok {
		c.enqueue(ref)
	}
}

// ownerOf returns the MD an object (or a tombstone of one) was written for.
func ownerOf(obj any) (machinecontroller.Ref, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return machinecontroller.Ref{}, false
	}
	return machinecontroller.Owner(m)
}

// onMachineSet enqueues the MachineDeployment that controls a MachineSet.
func (c *Controller) onMachineSet(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if ms, ok := obj.(*clusterv1alpha1.MachineSet); ok {
		if ref, ok := machinecontroller.MachineDeploymentOf(ms); ok {
			c.enqueue(ref)
		}
	}
}

// onMachine enqueues the MachineDeployment a Machine belongs to.
func (c *Controller) onMachine(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if m, ok := obj.(*clusterv1alpha1.Machine); ok && c.cfg.Machines != nil {
		if ref, ok := c.cfg.Machines.MachineDeploymentOf(m); ok {
			c.enqueue(ref)
		}
	}
}
