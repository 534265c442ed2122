package syncer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// overlayStatusDelay gathers the changes of many MDs into one status
// computation of the overlays that may select them.
const overlayStatusDelay = time.Second

// onOverlay syncs the MDs an overlay selected or selects when it is added,
// deleted or changes its spec (a new generation), and computes its status.
func (c *Controller) onOverlay(old, cur any) {
	for _, obj := range []any{old, cur} {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		o, ok := obj.(*overlaysv1alpha1.OperatingSystemProfileOverlay)
		if !ok {
			continue
		}
		mds, err := c.cfg.OverlaySelector.MachineDeployments(o, c.mds)
		if err != nil {
			continue
		}
		for _, md := range mds {
			c.enqueue(machinecontroller.RefOf(md))
		}
		c.overlayQueue.Add(o.Namespace + "/" + o.Name)
		// The overlays it may now conflict with, or no longer.
		if o.Namespace == c.cfg.ProfileNamespace {
			c.enqueueAllOverlays(overlayStatusDelay)
		} else {
			c.enqueueOverlaysOf(o.Namespace)
		}
	}
}

func (c *Controller) overlayHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.onOverlay(nil, obj) },
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*overlaysv1alpha1.OperatingSystemProfileOverlay)
			n, ok2 := cur.(*overlaysv1alpha1.OperatingSystemProfileOverlay)
			if ok1 && ok2 && o.Generation == n.Generation {
				if n.Status.ObservedGeneration != n.Generation {
					c.overlayQueue.Add(n.Namespace + "/" + n.Name)
				}
				return // our own status update, or labels: nothing renders differently
			}
			c.onOverlay(old, cur)
		},
		DeleteFunc: func(obj any) { c.onOverlay(nil, obj) },
	}
}

// enqueueOverlaysOf schedules the status of the overlays that may select
// MDs of namespace: its own and those of the server's namespace.
func (c *Controller) enqueueOverlaysOf(namespace string) {
	if c.cfg.Overlays == nil {
		return
	}
	for _, ns := range []string{c.cfg.ProfileNamespace, namespace} {
		objs, err := c.cfg.Overlays.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
		if err != nil {
			continue
		}
		for _, obj := range objs {
			if m, err := meta.Accessor(obj); err == nil {
				c.overlayQueue.AddAfter(m.GetNamespace()+"/"+m.GetName(), overlayStatusDelay)
			}
		}
	}
}

// enqueueAllOverlays schedules the status of every overlay, after delay.
func (c *Controller) enqueueAllOverlays(delay time.Duration) {
	if c.cfg.Overlays == nil {
		return
	}
	for _, key := range c.cfg.Overlays.GetIndexer().ListKeys() {
		c.overlayQueue.AddAfter(key, delay)
	}
}

func (c *Controller) runOverlayWorker(ctx context.Context) {
	drain(ctx, c.overlayQueue, "Failed to update the status of an overlay", func(ctx context.Context, key string) (time.Duration, error) {
		return 0, c.syncOverlay(ctx, key)
	})
}

// syncOverlay writes the status of one overlay when it changed.
func (c *Controller) syncOverlay(ctx context.Context, key string) error {
	obj, exists, err := c.cfg.Overlays.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return err
	}
	o := obj.(*overlaysv1alpha1.OperatingSystemProfileOverlay)
	status := o.Status.DeepCopy()
	ready := c.overlayReady(ctx, o, status)
	status.ObservedGeneration = o.Generation
	meta.SetStatusCondition(&status.Conditions, ready)
	if equality.Semantic.DeepEqual(&o.Status, status) {
		return nil
	}
	updated := o.DeepCopy()
	updated.Status = *status
	_, err = c.cfg.OverlayClient.OperatingSystemProfileOverlays(o.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// maxNamed is how many MachineDeployments a status message names.
const maxNamed = 3

// overlayReady is o's Ready condition: Invalid (it cannot apply to
// anything), Conflict (another overlay sets what it sets, for some MDs),
// RenderFailed (its templates fail for some MDs) or Applied. It counts the
// MDs o selects into status.
func (c *Controller) overlayReady(ctx context.Context, o *overlaysv1alpha1.OperatingSystemProfileOverlay, status *overlaysv1alpha1.OperatingSystemProfileOverlayStatus) metav1.Condition {
	cond := metav1.Condition{Type: overlaysv1alpha1.ConditionReady, Status: metav1.ConditionFalse, ObservedGeneration: o.Generation}
	mds, err := c.cfg.OverlaySelector.MachineDeployments(o, c.mds)
	if err != nil {
		mds = nil
	}
	status.MachineDeployments = int32(len(mds))
	invalid := c.cfg.OverlaySelector.Validate(o)
	if invalid == nil {
		invalid = render.CheckOverlay(o)
	}
	if invalid != nil {
		cond.Reason, cond.Message = overlaysv1alpha1.ReasonInvalid, invalid.Error()
		return cond
	}
	ref := render.OverlayRef(o)
	var conflicts, failures []string
	var firstConflict, firstFailure string
	applied := 0
	slices.SortFunc(mds, func(a, b *clusterv1alpha1.MachineDeployment) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	for _, md := range mds {
		out := c.resolve(ctx, md)
		name := md.Namespace + "/" + md.Name
		var ce *render.OverlayConflictError
		var oe *render.OverlayError
		switch {
		case out.Err == nil:
			applied++
		case errors.As(out.Err, &ce) && slices.Contains(ce.Overlays[:], ref):
			if firstConflict == "" {
				firstConflict = ce.Error()
			}
			conflicts = append(conflicts, name)
		case errors.As(out.Err, &oe) && oe.Overlay == ref:
			if firstFailure == "" {
				firstFailure = out.Err.Error()
			}
			failures = append(failures, name)
		}
	}
	switch {
	case len(conflicts) > 0:
		cond.Reason = overlaysv1alpha1.ReasonConflict
		cond.Message = fmt.Sprintf("%s, for %s; neither applies to them, and they keep their payloads", firstConflict, named(conflicts, len(mds)))
	case len(failures) > 0:
		cond.Reason = overlaysv1alpha1.ReasonRenderFailed
		cond.Message = fmt.Sprintf("fails for %s, which keep their payloads: %s", named(failures, len(mds)), firstFailure)
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, overlaysv1alpha1.ReasonApplied
		cond.Message = fmt.Sprintf("applied to %d of the %d MachineDeployments it selects (the others are pending or fail for reasons of their own)", applied, len(mds))
		if applied == len(mds) {
			cond.Message = fmt.Sprintf("applied to the %d MachineDeployments it selects", len(mds))
		}
	}
	return cond
}

// named says "2 of 5 MachineDeployments (team-a/x, team-a/y)", naming the
// first few.
func named(refs []string, of int) string {
	shown := refs
	if len(shown) > maxNamed {
		shown = shown[:maxNamed]
	}
	s := fmt.Sprintf("%d of %d MachineDeployments (%s", len(refs), of, strings.Join(shown, ", "))
	if len(refs) > maxNamed {
		s += ", ..."
	}
	return s + ")"
}
