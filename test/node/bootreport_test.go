package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/test/node/nodevm"
)

// reportedSteps are the steps the default profiles report (osm-setup under
// osm-report), in order; the last one ends provisioning.
var reportedSteps = []string{"payload-fetched", "packages", "container-runtime", "kubelet-binaries", "kubelet-configured", "kubelet-started"}

// bootReportTimeout bounds the wait for a report to be complete: the last
// step is reported when the kubelet starts, before the node registers, so
// it is normally there by the time the node is Ready.
const bootReportTimeout = 2 * time.Minute

// getBootReport reads the machine's BootReport through the aggregated API,
// as `kubectl get bootreports -n node-test NAME -o yaml` does.
func getBootReport(ctx context.Context, machine string) (*v1alpha1.BootReport, error) {
	return env.osm.OsmV1alpha1().BootReports(testNamespace).Get(ctx, machine, metav1.GetOptions{})
}

// checkBootReport waits until the machine's BootReport is Succeeded with
// every step of reportedSteps Succeeded, from the boot the node runs, and
// returns the steps' durations as the summary line shows them.
func checkBootReport(ctx context.Context, vm *nodevm.VM, b boot) (string, *v1alpha1.BootReport, error) {
	var r *v1alpha1.BootReport
	err := waitFor(ctx, "BootReport "+b.node+" Succeeded", bootReportTimeout, func() (string, error) {
		var err error
		if r, err = getBootReport(ctx, b.node); err != nil {
			return "BootReport " + b.node + ": " + err.Error(), nil
		}
		return bootReportPending(r), nil
	})
	if err != nil {
		if r != nil {
			err = fmt.Errorf("%w; report: %s", err, describeReport(r))
		}
		return "", r, err
	}
	// The node says what it was provisioned with: the profile, its version
	// and the MD's revision of the MachineJoin's answer, here the MD's OSC's.
	osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(testNamespace).Get(ctx, b.md, metav1.GetOptions{})
	if err != nil {
		return "", r, fmt.Errorf("OSC %s: %w", b.md, err)
	}
	if p, want := r.Spec.Profile, osc.Status.Profile; p.Name == "" || p.Version == "" || r.Spec.MachineDeploymentRevision == "" ||
		p.Name != want.Name || p.Version != want.Version || r.Spec.MachineDeploymentRevision != osc.Status.MachineDeploymentRevision {
		return "", r, fmt.Errorf("BootReport %s says profile %s %s, revision %q; the OSC of %s: profile %s %s, revision %q",
			b.node, p.Name, p.Version, r.Spec.MachineDeploymentRevision, b.md, want.Name, want.Version, osc.Status.MachineDeploymentRevision)
	}
	var d []string
	for _, s := range r.Status.Steps {
		if s.Duration != nil {
			d = append(d, fmt.Sprintf("%s %.0f s", s.Name, s.Duration.Seconds()))
		}
	}
	progress("%s: BootReport %s Succeeded, %d boot(s), boot %s, %s %s revision %s: %s", b.name, b.node, r.Status.Boots, r.Spec.BootID,
		r.Spec.Profile.Name, r.Spec.Profile.Version, r.Spec.MachineDeploymentRevision, strings.Join(d, ", "))
	return strings.Join(d, ", "), r, nil
}

// bootReportPending says what keeps r from being complete ("" when it is).
func bootReportPending(r *v1alpha1.BootReport) string {
	if r.Status.State != v1alpha1.BootStateSucceeded {
		return fmt.Sprintf("state %q at step %q: %s", r.Status.State, r.Status.Step, r.Status.Message)
	}
	// Completed by the node's own records, each of which osm-apiserver took
	// only with the answered boot's secret, not inferred from its Node.
	if r.Status.Reason != "" {
		return fmt.Sprintf("Succeeded by %s, not by the node's final record: %s", r.Status.Reason, r.Status.Message)
	}
	byName := map[string]v1alpha1.BootReportStep{}
	for _, s := range r.Status.Steps {
		byName[s.Name] = s
	}
	var missing []string
	for _, name := range reportedSteps {
		s, ok := byName[name]
		switch {
		case !ok:
			missing = append(missing, name+" not reported")
		case s.Phase != v1alpha1.StepPhaseSucceeded:
			missing = append(missing, name+" "+string(s.Phase))
		case s.Duration == nil:
			missing = append(missing, name+" without a duration")
		}
	}
	return strings.Join(missing, ", ")
}

func describeReport(r *v1alpha1.BootReport) string {
	var s []string
	for _, st := range r.Status.Steps {
		s = append(s, fmt.Sprintf("%s=%s", st.Name, st.Phase))
	}
	return fmt.Sprintf("state %s, step %s, message %q, steps %s", r.Status.State, r.Status.Step, r.Status.Message, strings.Join(s, " "))
}

// checkNotReportedAgain: a node that rebooted after provisioning sends
// nothing, so its report still shows the first boot.
func checkNotReportedAgain(ctx context.Context, b boot, before *v1alpha1.BootReport) error {
	r, err := getBootReport(ctx, b.node)
	if err != nil {
		return err
	}
	if r.Spec.BootID != before.Spec.BootID || r.Status.Boots != before.Status.Boots || r.Status.State != v1alpha1.BootStateSucceeded {
		return fmt.Errorf("BootReport %s changed after the reboot: boot %s (%d boots, %s), was %s (%d boots)",
			b.node, r.Spec.BootID, r.Status.Boots, r.Status.State, before.Spec.BootID, before.Status.Boots)
	}
	return nil
}

// failedReportTimeout is how long after the mirror served the broken file
// the test waits for the Failed report and the Event (the acceptance says 60 s).
const failedReportTimeout = 60 * time.Second

// failure is one failure the broken-mirror boot provokes.
type failure struct {
	name    string // in the summary line: node-test osp-ubuntu <name>: reported Failed at ...
	what    string // what the mirror breaks, for the progress lines
	step    string // the step that must fail
	logLine string // what the step's log tail must have
	// served is when the mirror first served the broken file (zero before).
	served func() time.Time
}

// brokenMirrorFailures are the broken-mirror boot's two phases: apt finds no
// containerd.io package (osm-setup's first run), then, the package back,
// the kubelet does not match its checksum (osm-setup's retry 30 s later).
func brokenMirrorFailures() []failure {
	m := env.servers.broken
	return []failure{
		{name: "broken-containerd", what: "a 404 for the containerd.io package", step: "container-runtime", logLine: "404  Not Found", served: m.debRefused.get},
		{name: "broken-kubelet", what: "the corrupted kubelet", step: "kubelet-binaries", logLine: "computed checksum did NOT match", served: m.kubeletServed.get},
	}
}

// runBrokenMirror runs the broken mirror's two failures: each must be
// reported within failedReportTimeout of the mirror serving the broken file,
// and between them the report must turn Provisioning again when osm-setup
// retries. Then the mirror is fixed, and the same VM goes on to join.
func runBrokenMirror(ctx context.Context, vm *nodevm.VM, b boot) error {
	fs := brokenMirrorFailures()
	after, err := waitFailedReport(ctx, vm, b, fs[0], nil)
	if err != nil {
		return fmt.Errorf("%s: %w", fs[0].name, err)
	}
	report("node-test osp-ubuntu %s on %s: reported Failed at %s after %d s", fs[0].name, b.image, fs[0].step, int(after.Seconds()))

	// The package is back; osm-setup retries from the failed step after 30 s.
	env.servers.broken.fix()
	fixed := time.Now()
	var again string // the step the report was first seen Provisioning at
	seen := func(r *v1alpha1.BootReport) {
		if again == "" && r.Status.State == v1alpha1.BootStateProvisioning {
			again = r.Status.Step
			progress("%s: BootReport %s Provisioning again at step %s, %d s after the mirror served the package again",
				b.name, b.node, again, int(time.Since(fixed).Seconds()))
		}
	}
	after, err = waitFailedReport(ctx, vm, b, fs[1], seen)
	if err != nil {
		return fmt.Errorf("%s: %w", fs[1].name, err)
	}
	if again == "" {
		return fmt.Errorf("%s: BootReport %s went from Failed at %s to Failed at %s without being Provisioning in between (osm-setup's retry)",
			fs[1].name, b.node, fs[0].step, fs[1].step)
	}
	report("node-test osp-ubuntu %s on %s: reported Failed at %s after %d s", fs[1].name, b.image, fs[1].step, int(after.Seconds()))
	env.servers.broken.fix()
	progress("%s: the mirror is whole again; osm-setup retries in 30 s", b.name)
	return nil
}

// checkRecovered: the Succeeded report of a node that recovered from the
// broken mirror keeps both failed attempts, each at its step, and each retry
// started at the failed step: the two failed steps ran twice, every other
// step once (osm-setup skips the steps that succeeded in this boot).
func checkRecovered(r *v1alpha1.BootReport) (string, error) {
	var kept []string
	failed := map[string]bool{}
	for _, f := range brokenMirrorFailures() {
		failed[f.step] = true
		var last *v1alpha1.BootStepFailure
		for _, s := range r.Status.Steps {
			if s.Name == f.step {
				last = s.LastFailure
			}
		}
		if last == nil {
			return "", fmt.Errorf("BootReport %s Succeeded but keeps no lastFailure of step %s (%s): %s", r.Name, f.step, f.name, describeReport(r))
		}
		// The failure kept is the one the mirror caused, not any other.
		if last.ExitCode == nil || *last.ExitCode == 0 || !strings.Contains(last.LogTail, f.logLine) {
			return "", fmt.Errorf("BootReport %s: lastFailure of step %s (%s) has exit code %v and no %q in its log tail: %s",
				r.Name, f.step, f.name, ptrString(last.ExitCode), f.logLine, describeReport(r))
		}
		kept = append(kept, fmt.Sprintf("%s (exit %d, %q)", f.step, *last.ExitCode, f.logLine))
	}
	for _, s := range r.Status.Steps {
		want := int32(1)
		if failed[s.Name] {
			want = 2
		}
		if s.Attempts != want {
			return "", fmt.Errorf("BootReport %s: step %s ran %d times, want %d (a retry must start at the failed step): %s",
				r.Name, s.Name, s.Attempts, want, describeReport(r))
		}
	}
	return fmt.Sprintf(" (recovered after Failed at %s, each retry from the failed step)", strings.Join(kept, ", then ")), nil
}

// waitFailedReport waits, from the moment the mirror served f's broken file,
// until the machine's BootReport is Failed at f.step, the step's log tail has
// a line containing f.logLine, and the MachineDeployment has the Warning
// Event of that failure (one per failure: the message names the machine and
// the step). It returns how long after the download all of that was visible.
// seen, if not nil, is shown every report read while waiting.
func waitFailedReport(ctx context.Context, vm *nodevm.VM, b boot, f failure, seen func(*v1alpha1.BootReport)) (time.Duration, error) {
	units := func() string { return guestUnits(ctx, vm) }
	read := func() (*v1alpha1.BootReport, error) {
		r, err := getBootReport(ctx, b.node)
		if err == nil && seen != nil {
			seen(r)
		}
		return r, err
	}
	// First the download of the broken file: the boot runs the steps before.
	err := waitFor(ctx, "the broken mirror to serve "+b.node+" "+f.what, registerTimeout, func() (string, error) {
		if done, err := vm.Exited(); done {
			if err == nil {
				return "", errors.New("the VM exited")
			}
			return "", fmt.Errorf("the VM exited: %w", err)
		}
		if seen != nil {
			_, _ = read() // only watched here; errors are the next read's
		}
		if f.served().IsZero() {
			return "not downloaded yet", nil
		}
		return "", nil
	}, units)
	if err != nil {
		return 0, err
	}
	start := f.served()
	progress("%s: the mirror served %s %d s after the VM started", b.name, f.what, int(start.Sub(vm.Started).Seconds()))
	var r *v1alpha1.BootReport
	want := "machine " + b.node + ": step " + f.step + " failed"
	err = waitFor(ctx, "BootReport "+b.node+" Failed at "+f.step+" and its Event", failedReportTimeout, func() (string, error) {
		var err error
		if r, err = read(); err != nil {
			return "BootReport " + b.node + ": " + err.Error(), nil
		}
		if r.Status.State != v1alpha1.BootStateFailed || r.Status.Step != f.step {
			return fmt.Sprintf("state %q at step %q: %s", r.Status.State, r.Status.Step, r.Status.Message), nil
		}
		var tail string
		for _, s := range r.Status.Steps {
			if s.Name == f.step {
				tail = s.LogTail
			}
		}
		if !strings.Contains(tail, f.logLine) {
			return fmt.Sprintf("the log tail of %s has no %q: %q", f.step, f.logLine, tail), nil
		}
		events, err := env.kube.CoreV1().Events(testNamespace).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
			"involvedObject.kind": "MachineDeployment", "involvedObject.name": b.md, "reason": "NodeProvisioningFailed",
		}.String()})
		if err != nil {
			return "", err
		}
		for _, e := range events.Items {
			if e.Type == corev1.EventTypeWarning && strings.HasPrefix(e.Message, want) {
				return "", nil
			}
		}
		return fmt.Sprintf("no Warning Event NodeProvisioningFailed on MachineDeployment %s saying %q (%d events)", b.md, want, len(events.Items)), nil
	})
	if err != nil {
		if r != nil {
			err = fmt.Errorf("%w; report: %s", err, describeReport(r))
		}
		return 0, err
	}
	return time.Since(start), nil
}

func ptrString(p *int32) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}
