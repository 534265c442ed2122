package syncer

import (
	"context"
	"errors"
	"slices"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

// Reasons of the syncer's Warning Events on MachineDeployments, besides
// ProfileNotFound and RenderFailed.
const (
	// ReasonSecretConflict: another MD owns the Secret names machine-controller
	// dictates for this one.
	ReasonSecretConflict = "SecretConflict"
	// ReasonSecretNameTooLong: a dictated Secret name is over 253 characters.
	ReasonSecretNameTooLong = "SecretNameTooLong"
	// ReasonPayloadTooLarge: a payload does not fit a Secret (1 MiB).
	ReasonPayloadTooLarge = "PayloadTooLarge"
	// ReasonUserDataTooLarge: the bootstrap payload is over the cloud's
	// user-data limit; the Secrets are written, but the cloud will refuse VMs.
	ReasonUserDataTooLarge = "UserDataTooLarge"
	// ReasonWriteFailed: the cluster refused a write (Forbidden, Invalid, ...).
	ReasonWriteFailed = "WriteFailed"
	// ReasonNoDefaultProfile: the MD names no profile and its operating
	// system has no default one.
	ReasonNoDefaultProfile = "NoDefaultProfile"
)

// refuse handles an MD that cannot have its Secrets (refusal is a
// *machinecontroller.ConflictError or *machinecontroller.NameTooLongError):
// it says so in a Warning Event and removes what the MD may hold — tokens, the
// fetch token's access, its own Secrets — so that no credential of it reads
// another MD's Secrets. It is synced again when the owner goes away.
func (c *Controller) refuse(ctx context.Context, md *clusterv1alpha1.MachineDeployment, refusal error) error {
	reason := ReasonSecretNameTooLong
	if _, ok := errors.AsType[*machinecontroller.ConflictError](refusal); ok {
		reason = ReasonSecretConflict
	}
	c.recorder.Eventf(machinecontroller.ObjectReference(md), corev1.EventTypeWarning, reason, "Wrote no Secrets: %v", refusal)
	return c.cleanup(ctx, machinecontroller.RefOf(md))
}

// mayOverwrite fails with a *machinecontroller.ConflictError when got, the
// Secret md's want would replace, belongs to another MachineDeployment that
// still has a claim to it. A Secret without our labels is no claim.
func (c *Controller) mayOverwrite(md *clusterv1alpha1.MachineDeployment, got *corev1.Secret) error {
	ref := machinecontroller.RefOf(md)
	other, ok := machinecontroller.Owner(got)
	if !ok || other == ref {
		return nil
	}
	if slices.Contains(ref.DictatedSecretNames(), got.Name) {
		// got may be newer than the cache md's claim was decided from.
		owner, err := c.claims.Owner(md, got)
		if err != nil || owner == ref {
			return err
		}
		return &machinecontroller.ConflictError{MD: ref, Owner: owner}
	}
	// Any other name is made of md's digest: another MD's object of that
	// name is taken over only once that MD is gone.
	if o, err := c.mds.Get(other.Namespace, other.Name); err == nil && o.DeletionTimestamp == nil {
		return &machinecontroller.ConflictError{MD: ref, Owner: other}
	}
	return nil
}

// warnWrite records a write the cluster refused in a Warning Event on md and
// in the write-failure metric, and returns err. Only the syncer knows of such
// failures, so this is where they show (see docs/design.md, Syncer).
// Failures that retrying overcomes (conflicts, timeouts) are only returned.
func (c *Controller) warnWrite(md *clusterv1alpha1.MachineDeployment, err error) error {
	if conflict, ok := errors.AsType[*machinecontroller.ConflictError](err); ok {
		c.recorder.Eventf(machinecontroller.ObjectReference(md), corev1.EventTypeWarning, ReasonSecretConflict, "Wrote no Secrets: %v", conflict)
		return err
	}
	switch reason := apierrors.ReasonForError(err); reason {
	case metav1.StatusReasonForbidden, metav1.StatusReasonInvalid, metav1.StatusReasonRequestEntityTooLarge,
		metav1.StatusReasonBadRequest, metav1.StatusReasonNotFound, metav1.StatusReasonUnauthorized, metav1.StatusReasonMethodNotAllowed:
		metrics.SyncerWriteFailures.WithLabelValues(string(reason)).Inc()
		c.recorder.Eventf(machinecontroller.ObjectReference(md), corev1.EventTypeWarning, ReasonWriteFailed, "%v", err)
	}
	return err
}

// renderFailed says why md's Secrets were kept as they were.
func (c *Controller) renderFailed(md *clusterv1alpha1.MachineDeployment, err error) {
	reason := "RenderFailed"
	if _, ok := errors.AsType[*resolve.SecretLimitError](err); ok {
		reason = ReasonPayloadTooLarge
	}
	c.recorder.Eventf(machinecontroller.ObjectReference(md), corev1.EventTypeWarning, reason, "Kept the previous payload Secrets: %v", err)
}

// checkUserDataLimit warns when the bootstrap payload is larger than the
// cloud accepts as user-data.
func (c *Controller) checkUserDataLimit(md *clusterv1alpha1.MachineDeployment, out *resolve.Rendered) {
	limit := machinecontroller.UserDataLimit(out.CloudProvider)
	if limit > 0 && out.Bootstrap.Size > limit {
		metrics.UserDataTooLarge.WithLabelValues(out.CloudProvider).Inc()
		c.recorder.Eventf(machinecontroller.ObjectReference(md), corev1.EventTypeWarning, ReasonUserDataTooLarge,
			"The bootstrap payload is %d bytes; cloud provider %s accepts at most %d bytes of user-data, so it will refuse the MachineDeployment's machines",
			out.Bootstrap.Size, out.CloudProvider, limit)
	}
}
