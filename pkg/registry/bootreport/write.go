package bootreport

import (
	"context"
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
)

// writeAttempts bounds the retries of a write that raced another.
const writeAttempts = 5

// write applies a step record to the machine's report: read, change, write
// with the read's resourceVersion, again when another write came between.
func (r *StepREST) write(ctx context.Context, ref machinecontroller.Ref, machine string, step *osm.BootStepSpec, known *bootreports.Known) (bootreports.Outcome, error) {
	name := bootreports.SecretName(ref.Namespace, machine)
	// One write of a report at a time on this replica: only writes of other
	// replicas can come between a read and its write.
	unlock := r.locks.lock(name)
	defer unlock()
	var lastErr error
	for range writeAttempts {
		out, err := r.writeOnce(ctx, ref, name, machine, step, known)
		if err == nil || !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			return out, err
		}
		lastErr = err
	}
	return bootreports.Outcome{}, fmt.Errorf("boot report of machine %s/%s changed under %d writes: %w", ref.Namespace, machine, writeAttempts, lastErr)
}

// writeOnce reads the report, applies step and writes it with the read's
// resourceVersion.
func (r *StepREST) writeOnce(ctx context.Context, ref machinecontroller.Ref, name, machine string, step *osm.BootStepSpec, known *bootreports.Known) (bootreports.Outcome, error) {
	current, err := r.cfg.Secrets.Get(ctx, name, metav1.GetOptions{})
	var old *osm.BootReport
	switch {
	case apierrors.IsNotFound(err):
		current = nil
	case err != nil:
		return bootreports.Outcome{}, err
	default:
		if old, err = bootreports.FromSecret(current); err != nil {
			// Unreadable (edited by someone else): start again.
			klog.ErrorS(err, "Replacing an unreadable boot report", "secret", klog.KObj(current))
			old = nil
		}
	}
	out, err := bootreports.Apply(old, ref.Name, machine, step, known, r.cfg.Now())
	if err != nil {
		return out, err
	}
	secret, err := bootreports.Secret(ref, out.Report)
	if err != nil {
		return out, err
	}
	if current == nil {
		_, err = r.cfg.Secrets.Create(ctx, secret, metav1.CreateOptions{})
	} else {
		secret.ResourceVersion = current.ResourceVersion
		_, err = r.cfg.Secrets.Update(ctx, secret, metav1.UpdateOptions{})
	}
	return out, err
}

// writeError is the answer to a write of the report that failed: the
// cluster's load answers pass, the rest is the server's fault.
func writeError(err error) error {
	if apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) {
		return err
	}
	return apierrors.NewInternalError(fmt.Errorf("failed to store the boot report: %w", err))
}

// observe tells of a record: a failed step is a Warning Event on the MD and
// a metric; a completed provisioning a duration.
func (r *StepREST) observe(md *clusterv1alpha1.MachineDeployment, machine string, out bootreports.Outcome) {
	if out.Provisioned > 0 {
		metrics.ProvisioningDuration.Observe(out.Provisioned.Seconds())
	}
	if !out.Failed {
		return
	}
	step := &out.Report.Status.Steps[0]
	for i := range out.Report.Status.Steps {
		if s := &out.Report.Status.Steps[i]; s.Name == out.Report.Status.Step {
			step = s
		}
	}
	metrics.BootStepFailures.WithLabelValues(r.steps.value(step.Name)).Inc()
	if r.cfg.Recorder != nil {
		// Boot report Events have never named the MD's resourceVersion;
		// they stay as they were.
		ref := machinecontroller.ObjectReference(md)
		ref.ResourceVersion = ""
		r.cfg.Recorder.Eventf(ref, corev1.EventTypeWarning, ReasonProvisioningFailed,
			"machine %s: %s", machine, bootreports.FailureMessage(step))
	}
}
