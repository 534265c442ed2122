package bootreport

import (
	"context"
	"errors"
	"fmt"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
)

// ReasonProvisioningFailed is the reason of the Warning Event on a
// MachineDeployment when one of its machines reports a failed step.
const ReasonProvisioningFailed = "NodeProvisioningFailed"

// MachineOwners says which MachineDeployment owns a Machine
// (machinecontroller.MachineOwners).
type MachineOwners interface {
	Owner(namespace, name string) (machinecontroller.MachineOwner, error)
}

// StepConfig is what the step subresource needs.
type StepConfig struct {
	// Secrets reads and writes the reports' Secrets (bootreports.Namespace).
	// Give its client a rate of its own: a flood of reports must not slow
	// the syncer's writes.
	Secrets typedcorev1.SecretInterface
	// Caller returns the MachineDeployment whose fetch credential a user is
	// (tokens.CallerMachineDeployment).
	Caller func(user.Info) (machinecontroller.Ref, bool)
	// MachineDeployments and Machines are the informers' caches.
	MachineDeployments machinecontroller.Lister
	Machines           MachineOwners
	// Recorder records the Warning Events of failed steps.
	Recorder record.EventRecorder
	// Limits bound the records per MD and per machine (zero: DefaultLimits).
	Limits Limits
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// StepREST is the storage of bootreports/<machine>/step: a node posts one
// step record (kind BootStep), which osm-apiserver authorizes itself and
// applies to the machine's report.
type StepREST struct {
	cfg     StepConfig
	limiter *limiter
	locks   stripedLocks
	steps   boundedLabels
}

var (
	_ rest.Storage                  = &StepREST{}
	_ rest.NamedCreater             = &StepREST{}
	_ rest.GroupVersionKindProvider = &StepREST{}
)

// NewStepREST returns the storage of the step subresource.
func NewStepREST(cfg StepConfig) *StepREST {
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &StepREST{cfg: cfg, limiter: newLimiter(cfg.Limits), steps: boundedLabels{max: maxStepLabels}}
}

// New implements rest.Storage.
func (r *StepREST) New() runtime.Object {
	return &osm.BootStep{}
}

// Destroy implements rest.Storage.
func (r *StepREST) Destroy() {}

// GroupVersionKind implements rest.GroupVersionKindProvider: the
// subresource takes and answers a BootStep, not a BootReport.
func (r *StepREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return v1alpha1.SchemeGroupVersion.WithKind("BootStep")
}

// Create implements rest.NamedCreater: name is the machine's.
func (r *StepREST) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	out, result, err := r.create(ctx, name, obj, createValidation, options)
	metrics.BootReports.WithLabelValues(result).Inc()
	return out, err
}

func (r *StepREST) create(ctx context.Context, machine string, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, string, error) {
	req, ok := obj.(*osm.BootStep)
	if !ok {
		return nil, "invalid", apierrors.NewBadRequest(fmt.Sprintf("not a BootStep: %T", obj))
	}
	namespace := genericapirequest.NamespaceValue(ctx)
	u, _ := genericapirequest.UserFrom(ctx)
	md, err := r.authorize(u, namespace, machine)
	if err != nil {
		return nil, "forbidden", err
	}
	ref := machinecontroller.RefOf(md)
	if ok, wait := r.limiter.allow(ref.String(), namespace+"/"+machine, r.cfg.Now()); !ok {
		return nil, "throttled", apierrors.NewTooManyRequests(
			fmt.Sprintf("too many step records from machine %s/%s or its machinedeployment: at most %v a second per machine and %v per machinedeployment",
				namespace, machine, r.cfg.Limits.PerMachine, r.cfg.Limits.PerMachineDeployment), retryAfterSeconds(wait))
	}
	if err := bootreports.TooLarge(&req.Spec); err != nil {
		return nil, "too_large", apierrors.NewRequestEntityTooLargeError(err.Error())
	}
	if errs := bootreports.Validate(&req.Spec); len(errs) > 0 {
		return nil, "invalid", apierrors.NewInvalid(osm.Kind("BootStep"), machine, errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, req); err != nil {
			return nil, "invalid", err
		}
	}
	answer := &osm.BootStep{ObjectMeta: metav1.ObjectMeta{Name: machine, Namespace: namespace}, Spec: req.Spec}
	answer.Spec.LogTail = bootreports.Tail(bootreports.Scrub(req.Spec.LogTail))
	if options != nil && len(options.DryRun) > 0 {
		return answer, "accepted", nil
	}
	out, err := r.write(ctx, ref, machine, &req.Spec)
	if err != nil {
		klog.ErrorS(err, "Failed to record a boot step", "machine", klog.KRef(namespace, machine), "step", req.Spec.Step)
		if errors.Is(err, bootreports.ErrTooManySteps) {
			return nil, "too_large", apierrors.NewRequestEntityTooLargeError(err.Error())
		}
		return nil, "error", writeError(err)
	}
	answer.Status.State = out.Report.Status.State
	r.observe(md, machine, out)
	return answer, "accepted", nil
}

// authorize returns the MachineDeployment of machine when u may report its
// boot: u is the fetch credential of an MD of namespace, and the machine
// belongs to that MD. Otherwise a 403 says why.
func (r *StepREST) authorize(u user.Info, namespace, machine string) (*clusterv1alpha1.MachineDeployment, error) {
	forbidden := func(format string, args ...any) error {
		return apierrors.NewForbidden(resource, machine, fmt.Errorf(format, args...))
	}
	ref, ok := r.cfg.Caller(u)
	if !ok {
		name := "nobody"
		if u != nil {
			name = u.GetName()
		}
		return nil, forbidden("only the fetch credential of a machine's MachineDeployment may report its boot, and %s is none", name)
	}
	if ref.Namespace != namespace {
		return nil, forbidden("the caller is the fetch credential of machinedeployment %s, not of one in namespace %s", ref, namespace)
	}
	md, err := r.cfg.MachineDeployments.Get(ref.Namespace, ref.Name)
	if err != nil || !machinecontroller.HasProfile(md) || md.DeletionTimestamp != nil {
		return nil, forbidden("machinedeployment %s is gone or names no OperatingSystemProfile", ref)
	}
	owner, err := r.cfg.Machines.Owner(namespace, machine)
	switch {
	case apierrors.IsNotFound(err):
		return nil, forbidden("machine %s/%s is not known", namespace, machine)
	case err != nil:
		return nil, forbidden("%v", err)
	case owner.MachineDeployment != ref:
		return nil, forbidden("machine %s/%s belongs to machinedeployment %s, not to %s", namespace, machine, owner.MachineDeployment, ref)
	case owner.UID != md.UID:
		return nil, forbidden("machine %s/%s belongs to an earlier machinedeployment %s", namespace, machine, ref)
	}
	return md, nil
}

// writeAttempts bounds the retries of a write that raced another.
const writeAttempts = 5

// write applies a step record to the machine's report: read, change, write
// with the read's resourceVersion, again when another write came between.
func (r *StepREST) write(ctx context.Context, ref machinecontroller.Ref, machine string, step *osm.BootStepSpec) (bootreports.Outcome, error) {
	name := bootreports.SecretName(ref.Namespace, machine)
	// One write of a report at a time on this replica: only writes of other
	// replicas can come between a read and its write.
	unlock := r.locks.lock(name)
	defer unlock()
	var lastErr error
	for range writeAttempts {
		out, err := r.writeOnce(ctx, ref, name, machine, step)
		if err == nil || !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			return out, err
		}
		lastErr = err
	}
	return bootreports.Outcome{}, fmt.Errorf("boot report of machine %s/%s changed under %d writes: %w", ref.Namespace, machine, writeAttempts, lastErr)
}

// writeOnce reads the report, applies step and writes it with the read's
// resourceVersion.
func (r *StepREST) writeOnce(ctx context.Context, ref machinecontroller.Ref, name, machine string, step *osm.BootStepSpec) (bootreports.Outcome, error) {
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
	out, err := bootreports.Apply(old, ref.Name, machine, step, r.cfg.Now())
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
		r.cfg.Recorder.Eventf(objectReference(md), corev1.EventTypeWarning, ReasonProvisioningFailed,
			"machine %s: %s", machine, bootreports.FailureMessage(step))
	}
}

func objectReference(md *clusterv1alpha1.MachineDeployment) *corev1.ObjectReference {
	return &corev1.ObjectReference{
		APIVersion: clusterv1alpha1.SchemeGroupVersion.String(),
		Kind:       "MachineDeployment",
		Namespace:  md.Namespace,
		Name:       md.Name,
		UID:        md.UID,
	}
}
