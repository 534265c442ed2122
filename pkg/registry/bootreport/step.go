package bootreport

import (
	"context"
	"errors"
	"fmt"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
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
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
)

// ReasonProvisioningFailed is the reason of the Warning Event on a
// MachineDeployment when one of its machines reports a failed step.
const ReasonProvisioningFailed = "NodeProvisioningFailed"

// MachineOwners says which MachineDeployment owns a Machine
// (machinecontroller.MachineOwners).
type MachineOwners interface {
	Owner(namespace, name string) (machines.MachineOwner, error)
}

// Answers reads the record of a machine's MachineJoin answer
// (nodejoin.Answers).
type Answers interface {
	Of(ctx context.Context, m *clusterv1alpha1.Machine) (nodejoin.Record, bool, error)
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
	MachineDeployments machines.Lister
	Machines           MachineOwners
	// Known returns the credentials the server knows for an MD
	// (KnownValues): its log tails are scrubbed of them by value. Nil knows
	// none; the patterns still apply.
	Known func(machinecontroller.Ref) []string
	// Answers says which boot a machine was answered to
	// (nodejoin.Answers): once it was, only that boot's records are taken.
	// Nil takes the records of every machine of the caller's MD.
	Answers Answers
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
	md, m, err := r.authorize(u, namespace, machine)
	if err != nil {
		return nil, "forbidden", err
	}
	// The boot's secret proves the boot and goes no further: not into the
	// report, the answer, an error or a log.
	err = r.answeredBoot(ctx, m, &req.Spec)
	req.Spec.BootSecret = ""
	if err != nil {
		return nil, "forbidden", err
	}
	ref := machinecontroller.RefOf(md)
	replicas := replicasOf(md)
	if ok, wait := r.limiter.allow(ref.String(), replicas, namespace+"/"+machine, r.cfg.Now()); !ok {
		mdRate, _ := r.cfg.Limits.forReplicas(replicas)
		return nil, "throttled", apierrors.NewTooManyRequests(
			fmt.Sprintf("too many step records from machine %s/%s or its machinedeployment: at most %v a second per machine and %v per machinedeployment of %d replicas",
				namespace, machine, r.cfg.Limits.PerMachine, mdRate, replicas), retryAfterSeconds(wait))
	}
	if err := bootreports.TooLarge(&req.Spec); err != nil {
		return nil, "too_large", apierrors.NewRequestEntityTooLargeError(err.Error())
	}
	// From here on only the scrubbed tail exists: in validation errors,
	// admission, the answer, the report, its message and Events, logs.
	var known *bootreports.Known
	if r.cfg.Known != nil {
		known = bootreports.NewKnown(r.cfg.Known(ref)...)
	}
	req.Spec.LogTail = bootreports.Tail(bootreports.Scrub(req.Spec.LogTail, known))
	if errs := bootreports.Validate(&req.Spec, known); len(errs) > 0 {
		return nil, "invalid", apierrors.NewInvalid(osm.Kind("BootStep"), machine, errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, req); err != nil {
			return nil, "invalid", err
		}
	}
	answer := &osm.BootStep{ObjectMeta: metav1.ObjectMeta{Name: machine, Namespace: namespace}, Spec: req.Spec}
	if options != nil && len(options.DryRun) > 0 {
		return answer, "accepted", nil
	}
	out, err := r.write(ctx, ref, machine, &req.Spec, known)
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

// replicasOf is the number of machines md asks for (1 when unset, as
// machine-controller defaults it).
func replicasOf(md *clusterv1alpha1.MachineDeployment) int {
	if md.Spec.Replicas == nil {
		return 1
	}
	return max(0, int(*md.Spec.Replicas))
}
