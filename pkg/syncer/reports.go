package syncer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
)

// Boot reports go with their MachineDeployment (cleanup), with their
// Machine, and when they expire. The leader decides from the reports'
// metadata informer and the Machine informer, and deletes by UID, so that a
// report written again meanwhile stays.

// DefaultBootReportTTL is how long a report is kept after its last write.
const DefaultBootReportTTL = 7 * 24 * time.Hour

// machineGrace is how long a report whose Machine the leader does not know
// is kept after its creation: the replica that accepted it knew the
// Machine, the leader's informer may not yet.
const machineGrace = time.Minute

// reportSweepPeriod is how often every report is looked at for expiry.
const reportSweepPeriod = time.Minute

// reportsEnabled says whether the syncer keeps boot reports.
func (c *Controller) reportsEnabled() bool {
	return c.cfg.BootReports != nil && c.cfg.MachineInformer != nil
}

// machineGonePrefix marks a queued report whose Machine was seen deleted:
// it goes without the grace of a Machine the informer never saw.
const machineGonePrefix = "machine-gone/"

// onMachineDeleted queues the report of a deleted Machine.
func (c *Controller) onMachineDeleted(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if m, ok := obj.(*clusterv1alpha1.Machine); ok {
		c.reportQueue.Add(machineGonePrefix + bootreports.SecretName(m.Namespace, m.Name))
	}
}

// sweepReports queues every report, for expiry and for Machines deleted
// while no replica led.
func (c *Controller) sweepReports(context.Context) {
	for _, r := range c.cfg.BootReports.List() {
		c.reportQueue.Add(r.GetName())
	}
}

func (c *Controller) runReports(ctx context.Context) {
	go wait.UntilWithContext(ctx, c.sweepReports, reportSweepPeriod)
	drain(ctx, c.reportQueue, "Failed to remove a boot report", c.syncReport)
}

// syncReport deletes the report Secret of key (its name, after
// machineGonePrefix when its Machine was seen deleted) if its
// MachineDeployment or Machine is gone or it expired; retry asks to look
// again then.
func (c *Controller) syncReport(ctx context.Context, key string) (retry time.Duration, err error) {
	name, machineDeleted := strings.CutPrefix(key, machineGonePrefix)
	obj, exists, err := c.cfg.BootReports.Informer().GetIndexer().GetByKey(bootreports.Namespace + "/" + name)
	if err != nil || !exists {
		return 0, err
	}
	r, ok := obj.(metav1.Object)
	if !ok {
		return 0, nil
	}
	namespace, machine, ok := bootreports.MachineOf(r)
	if !ok {
		return 0, nil
	}
	reason := ""
	now := time.Now()
	ref, owned := machinecontroller.Owner(r)
	_, err = c.mds.Get(ref.Namespace, ref.Name)
	switch {
	case !owned || apierrors.IsNotFound(err):
		reason = "its machinedeployment is gone"
	case err != nil:
		return 0, err
	case now.Sub(bootreports.LastUpdate(r)) > c.cfg.BootReportTTL:
		reason = fmt.Sprintf("it expired (no step for %s)", c.cfg.BootReportTTL)
	case !c.machineExists(namespace, machine):
		if age := now.Sub(r.GetCreationTimestamp().Time); age < machineGrace && !machineDeleted {
			return machineGrace - age, nil
		}
		reason = "its machine is gone"
	default:
		return 0, c.completeFromNode(ctx, r, ref, namespace, machine)
	}
	return 0, c.deleteReport(ctx, r, reason)
}

func (c *Controller) machineExists(namespace, name string) bool {
	_, exists, err := c.cfg.MachineInformer.GetIndexer().GetByKey(namespace + "/" + name)
	return err != nil || exists // unsure: keep it
}

// deleteReport deletes a report's Secret if it is still the one seen.
func (c *Controller) deleteReport(ctx context.Context, r metav1.Object, reason string) error {
	uid := r.GetUID()
	err := c.cfg.Client.CoreV1().Secrets(bootreports.Namespace).Delete(ctx, r.GetName(),
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to delete boot report %s/%s: %w", bootreports.Namespace, r.GetName(), err)
	}
	klog.FromContext(ctx).V(2).Info("Deleted a boot report", "secret", klog.KRef(bootreports.Namespace, r.GetName()),
		"machine", r.GetAnnotations()[bootreports.MachineAnnotation], "reason", reason)
	return nil
}

// cleanupReports deletes the reports of the machines of ref, an MD that is gone.
func (c *Controller) cleanupReports(ctx context.Context, ref machinecontroller.Ref) error {
	if !c.reportsEnabled() {
		return nil
	}
	var errs []error
	for _, r := range c.cfg.BootReports.Owned(ref) {
		errs = append(errs, c.deleteReport(ctx, r, "its machinedeployment is gone"))
	}
	return errors.Join(errs...)
}

// A report agrees with the Node: once a machine's Node registered, a report
// still Provisioning (its final records lost, or not sent yet) is completed
// as Succeeded with reason NodeRegistered (bootreports.CompleteFromNode). The
// leader looks when a Node is added, a Machine gets its nodeRef and a report
// turns Provisioning, and at every sweep.

// completesFromNodes says whether the syncer completes reports from Nodes.
func (c *Controller) completesFromNodes() bool {
	return c.reportsEnabled() && c.cfg.Nodes != nil && c.cfg.Machines != nil
}

// onNodeAdded queues the reports of the Machines a new Node may be of.
func (c *Controller) onNodeAdded(obj any) {
	n, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	objs, err := c.cfg.MachineInformer.GetIndexer().ByIndex(machines.NodeNameIndex, n.GetName())
	if err != nil {
		return
	}
	for _, o := range objs {
		if m, ok := o.(*clusterv1alpha1.Machine); ok {
			c.reportQueue.Add(bootreports.SecretName(m.Namespace, m.Name))
		}
	}
}

// onMachineNodeRef queues the report of a Machine that got its nodeRef.
func (c *Controller) onMachineNodeRef(old, cur any) {
	o, ok1 := old.(*clusterv1alpha1.Machine)
	m, ok2 := cur.(*clusterv1alpha1.Machine)
	if c.completesFromNodes() && ok1 && ok2 && o.Status.NodeRef == nil && m.Status.NodeRef != nil {
		c.reportQueue.Add(bootreports.SecretName(m.Namespace, m.Name))
	}
}

// onReportUpdated queues a report that turned Provisioning.
func (c *Controller) onReportUpdated(old, cur any) {
	o, ok1 := old.(metav1.Object)
	n, ok2 := cur.(metav1.Object)
	provisioning := string(osm.BootStateProvisioning)
	if c.completesFromNodes() && ok1 && ok2 && n.GetLabels()[bootreports.StateLabel] == provisioning &&
		o.GetLabels()[bootreports.StateLabel] != provisioning {
		c.reportQueue.Add(n.GetName())
	}
}

// completeFromNode completes the report r of machine, of the MD ref, if it
// is Provisioning and the machine's Node registered.
func (c *Controller) completeFromNode(ctx context.Context, r metav1.Object, ref machinecontroller.Ref, namespace, machine string) error {
	if !c.completesFromNodes() || r.GetLabels()[bootreports.StateLabel] != string(osm.BootStateProvisioning) {
		return nil
	}
	m, err := c.cfg.Machines.Get(namespace, machine)
	if err != nil {
		return nil // gone: the sweep deletes its report
	}
	node, ok := c.cfg.Machines.NodeOf(m)
	if !ok {
		return nil
	}
	out, err := bootreports.Update(ctx, c.cfg.Client.CoreV1().Secrets(bootreports.Namespace), ref, machine,
		func(old *osm.BootReport) (bootreports.Outcome, error) {
			return bootreports.CompleteFromNode(old, time.Now()), nil
		})
	if err != nil {
		return fmt.Errorf("failed to complete the boot report of machine %s/%s from its node %s: %w", namespace, machine, node, err)
	}
	if out.Report != nil {
		klog.FromContext(ctx).V(2).Info("Completed a boot report from its Node", "machine", klog.KRef(namespace, machine), "node", node,
			"lastStep", out.Report.Status.Step)
	}
	return nil
}
