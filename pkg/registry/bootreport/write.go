package bootreport

import (
	"context"
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
)

// write applies a step record to the machine's report (bootreports.Update).
func (r *StepREST) write(ctx context.Context, ref machinecontroller.Ref, machine string, step *osm.BootStepSpec, known *bootreports.Known) (bootreports.Outcome, error) {
	// One write of a report at a time on this replica: only writes of other
	// replicas (and the leader's completion from the Node) can come between
	// a read and its write.
	unlock := r.locks.lock(bootreports.SecretName(ref.Namespace, machine))
	defer unlock()
	return bootreports.Update(ctx, r.cfg.Secrets, ref, machine, func(old *osm.BootReport) (bootreports.Outcome, error) {
		return bootreports.Apply(old, ref.Name, machine, step, known, r.cfg.Now())
	})
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
