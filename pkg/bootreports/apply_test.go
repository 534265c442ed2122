package bootreports

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func started(step string) *osm.BootStepSpec {
	return &osm.BootStepSpec{Step: step, Phase: osm.StepPhaseStarted, BootID: "boot-1",
		Profile: osm.ProfileReference{Name: "osp-ubuntu", Version: "v1.2.0"}, MachineDeploymentRevision: "3"}
}

func ended(step string, phase osm.StepPhase, code int32, d time.Duration, tail string) *osm.BootStepSpec {
	return &osm.BootStepSpec{Step: step, Phase: phase, ExitCode: ptr.To(code), Duration: &metav1.Duration{Duration: d},
		BootID: "boot-1", LogTail: tail}
}

// apply applies records one second apart and returns the last outcome.
func apply(t *testing.T, r *osm.BootReport, steps ...*osm.BootStepSpec) (Outcome, *osm.BootReport) {
	t.Helper()
	var out Outcome
	for i, s := range steps {
		if errs := Validate(s, nil); len(errs) > 0 {
			t.Fatalf("record %d: %v", i, errs.ToAggregate())
		}
		var err error
		out, err = Apply(r, "pool", "pool-abc", s, nil, t0.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		r = out.Report
	}
	return out, r
}

func TestApplyABootThatSucceeds(t *testing.T) {
	runtime := ended("container-runtime", osm.StepPhaseSucceeded, 0, 800*time.Millisecond, "ok")
	final := ended("kubelet-started", osm.StepPhaseSucceeded, 0, 2*time.Second, "")
	final.Final = true
	out, r := apply(t, nil, started("container-runtime"), runtime, started("kubelet-started"))
	if r.Status.State != osm.BootStateProvisioning || r.Status.Step != "kubelet-started" || r.Status.Message != "step kubelet-started running" {
		t.Errorf("while provisioning: %+v", r.Status)
	}
	if r.Spec.MachineDeployment != "pool" || r.Spec.Machine != "pool-abc" || r.Spec.BootID != "boot-1" ||
		r.Spec.Profile.Name != "osp-ubuntu" || r.Spec.MachineDeploymentRevision != "3" {
		t.Errorf("spec %+v", r.Spec)
	}
	if s := r.Status.Steps[0]; s.Phase != osm.StepPhaseSucceeded || s.LogTail != "" || s.Attempts != 1 ||
		!s.StartTime.Time.Equal(t0) || !s.FinishTime.Time.Equal(t0.Add(time.Second)) {
		t.Errorf("a succeeded step keeps no log and its times: %+v", s)
	}
	out, err := Apply(r, "pool", "pool-abc", final, nil, t0.Add(90*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	r = out.Report
	if r.Status.State != osm.BootStateSucceeded || r.Status.CompletionTime == nil || out.Failed {
		t.Errorf("after the final step: %+v", r.Status)
	}
	if out.Provisioned != 90*time.Second {
		t.Errorf("provisioned after %s, want 90s from the first record", out.Provisioned)
	}
	if r.Status.Message != "provisioned in 90s" {
		t.Errorf("message %q", r.Status.Message)
	}
	// Another step after success (a post-join check) does not reopen it.
	_, r = apply(t, r, ended("post-check", osm.StepPhaseSucceeded, 0, time.Second, ""))
	if r.Status.State != osm.BootStateSucceeded {
		t.Errorf("state %s after a later step", r.Status.State)
	}
}

func TestApplyAFailure(t *testing.T) {
	tail := "Reading package lists...\nE: Unable to locate package containerd\nAuthorization: Bearer " + jwt
	out, r := apply(t, nil, started("packages"), ended("packages", osm.StepPhaseFailed, 100, 3*time.Second, tail))
	if !out.Failed || r.Status.State != osm.BootStateFailed || r.Status.CompletionTime == nil {
		t.Fatalf("after a failure: %+v", r.Status)
	}
	s := r.Status.Steps[0]
	if strings.Contains(s.LogTail, jwt) || !strings.Contains(s.LogTail, "Unable to locate package") {
		t.Errorf("log tail not scrubbed or lost: %q", s.LogTail)
	}
	want := "step packages failed with exit code 100: E: Unable to locate package containerd"
	if r.Status.Message != want {
		t.Errorf("message %q, want %q", r.Status.Message, want)
	}
	// The node retries the step, and it works: provisioning goes on.
	_, r = apply(t, r, started("packages"))
	if r.Status.State != osm.BootStateProvisioning || r.Status.Steps[0].Attempts != 2 || r.Status.CompletionTime != nil {
		t.Errorf("after a retry: %+v", r.Status)
	}
}

// A script retried from its first step after a failure (osm-setup of the
// default profiles before v0.7.0, or a custom profile's): the steps before the
// failed one start again, the report is Provisioning again, and the failure
// stays, in its step until that one starts again, then as its last failure.
// (Today's osm-setup retries from the failed step: the part below from "The
// failed step runs again" on.)
func TestApplyARetriedScript(t *testing.T) {
	ok := func(step string) *osm.BootStepSpec { return ended(step, osm.StepPhaseSucceeded, 0, time.Second, "") }
	_, r := apply(t, nil, started("packages"), ok("packages"), started("container-runtime"),
		ended("container-runtime", osm.StepPhaseFailed, 1, 2*time.Second, "E: containerd.service failed"))
	if r.Status.State != osm.BootStateFailed {
		t.Fatalf("after a failure: %+v", r.Status)
	}
	failedAt := r.Status.Steps[1].FinishTime

	// The retry starts with the first step.
	_, r = apply(t, r, started("packages"))
	want := "step packages running, again after step container-runtime failed with exit code 1: E: containerd.service failed"
	if r.Status.State != osm.BootStateProvisioning || r.Status.Step != "packages" || r.Status.CompletionTime != nil || r.Status.Message != want {
		t.Errorf("after the retry started: state %s, step %s, message %q", r.Status.State, r.Status.Step, r.Status.Message)
	}
	if s := r.Status.Steps[1]; s.Phase != osm.StepPhaseFailed || s.LogTail == "" {
		t.Errorf("the failed step is not kept until it runs again: %+v", s)
	}

	// The failed step runs again: its failure is kept as its last one.
	_, r = apply(t, r, ok("packages"), started("container-runtime"))
	s := r.Status.Steps[1]
	if r.Status.State != osm.BootStateProvisioning || s.Phase != osm.StepPhaseStarted || s.Attempts != 2 || s.LogTail != "" {
		t.Fatalf("the failed step started again: state %s, step %+v", r.Status.State, s)
	}
	if f := s.LastFailure; f == nil || f.ExitCode == nil || *f.ExitCode != 1 || f.LogTail != "E: containerd.service failed" ||
		!f.FinishTime.Equal(failedAt) || f.Duration.Duration != 2*time.Second {
		t.Errorf("last failure %+v", s.LastFailure)
	}
	if !strings.Contains(r.Status.Message, "again after step container-runtime failed") {
		t.Errorf("message %q", r.Status.Message)
	}

	// It fails again: Failed, its last failure the one before.
	_, r = apply(t, r, ended("container-runtime", osm.StepPhaseFailed, 2, time.Second, "second"))
	if s := r.Status.Steps[1]; r.Status.State != osm.BootStateFailed || s.LogTail != "second" || s.LastFailure.LogTail != "E: containerd.service failed" ||
		r.Status.Message != "step container-runtime failed with exit code 2: second" {
		t.Errorf("after a second failure: %s %q %+v", r.Status.State, r.Status.Message, s)
	}

	// A third attempt succeeds, and so does provisioning: the latest failure stays.
	final := ok("kubelet-started")
	final.Final = true
	_, r = apply(t, r, started("container-runtime"), ok("container-runtime"), final)
	if s := r.Status.Steps[1]; r.Status.State != osm.BootStateSucceeded || s.Attempts != 3 || s.LastFailure == nil || s.LastFailure.LogTail != "second" {
		t.Errorf("after success: %s %+v", r.Status.State, s)
	}

	// A later step after a failure (a script that goes on) is Provisioning, too.
	_, r = apply(t, nil, ended("a", osm.StepPhaseFailed, 1, time.Second, "x"), started("b"))
	if r.Status.State != osm.BootStateProvisioning || r.Status.Step != "b" {
		t.Errorf("a later step after a failure: %s %s", r.Status.State, r.Status.Step)
	}
}

func TestApplyANewBootStartsAgain(t *testing.T) {
	_, r := apply(t, nil, started("a"), ended("a", osm.StepPhaseFailed, 1, time.Second, "boom"))
	next := started("a")
	next.BootID = "boot-2"
	_, r = apply(t, r, next)
	if r.Status.Boots != 2 || len(r.Status.Steps) != 1 || r.Status.State != osm.BootStateProvisioning || r.Spec.BootID != "boot-2" {
		t.Errorf("after a new boot: %+v %+v", r.Spec, r.Status)
	}
}

func TestApplyBoundsStepsAndLogTails(t *testing.T) {
	var r *osm.BootReport
	for i := range MaxSteps {
		out, err := Apply(r, "pool", "m", ended(stepNameOf(i), osm.StepPhaseFailed, 1, time.Second, strings.Repeat("e\n", 100)), nil, t0)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		r = out.Report
	}
	if _, err := Apply(r, "pool", "m", started("one-more"), nil, t0); !errors.Is(err, ErrTooManySteps) {
		t.Errorf("step %d: %v, want ErrTooManySteps", MaxSteps+1, err)
	}
	tails := 0
	for _, s := range r.Status.Steps {
		if s.LogTail != "" {
			tails++
		}
	}
	if tails != maxLogTails {
		t.Errorf("%d log tails kept, want %d", tails, maxLogTails)
	}
	if r.Status.Steps[MaxSteps-1].LogTail == "" {
		t.Error("the latest failure's log tail was dropped")
	}
}

func TestApplyBoundsLastFailures(t *testing.T) {
	var r *osm.BootReport
	// Every step fails, and starts again: its failure is its last one.
	for i := range 2 * maxLogTails {
		_, r = apply(t, r, ended(stepNameOf(i), osm.StepPhaseFailed, 1, time.Second, "boom"), started(stepNameOf(i)))
	}
	tails := 0
	for _, s := range r.Status.Steps {
		if s.LogTail != "" || s.LastFailure == nil {
			t.Fatalf("step %+v", s)
		}
		if s.LastFailure.LogTail != "" {
			tails++
		}
	}
	if tails != maxLogTails || r.Status.Steps[2*maxLogTails-1].LastFailure.LogTail == "" {
		t.Errorf("%d log tails of last failures kept, want the latest %d", tails, maxLogTails)
	}
}

func stepNameOf(i int) string {
	return "step-" + string(rune('a'+i/26)) + string(rune('a'+i%26))
}

func TestValidate(t *testing.T) {
	ok := ended("kubelet-binaries", osm.StepPhaseFailed, 1, time.Second, "x")
	if errs := Validate(ok, nil); len(errs) > 0 {
		t.Fatalf("valid record: %v", errs)
	}
	bad := []func(s *osm.BootStepSpec){
		func(s *osm.BootStepSpec) { s.Step = "" },
		func(s *osm.BootStepSpec) { s.Step = "Upper" },
		func(s *osm.BootStepSpec) { s.Step = strings.Repeat("a", 64) },
		func(s *osm.BootStepSpec) { s.Phase = "Done" },
		func(s *osm.BootStepSpec) { s.ExitCode = ptr.To[int32](256) },
		func(s *osm.BootStepSpec) { s.Phase, s.ExitCode = osm.StepPhaseSucceeded, ptr.To[int32](2) },
		func(s *osm.BootStepSpec) { s.Phase = osm.StepPhaseStarted },
		func(s *osm.BootStepSpec) { s.Duration = &metav1.Duration{Duration: -time.Second} },
		func(s *osm.BootStepSpec) { s.BootID = "a/b" },
		func(s *osm.BootStepSpec) { s.MachineDeploymentRevision = "three" },
		func(s *osm.BootStepSpec) { s.Profile.Name = "Not_A_Name" },
		func(s *osm.BootStepSpec) { s.Profile.Version = "v1\nv2" },
	}
	for i, mutate := range bad {
		s := *ok
		mutate(&s)
		if errs := Validate(&s, nil); len(errs) == 0 {
			t.Errorf("case %d: %+v accepted", i, s)
		}
	}
	big := *ok
	big.LogTail = strings.Repeat("x", MaxRecordBytes)
	if TooLarge(&big) == nil || TooLarge(ok) != nil {
		t.Error("TooLarge disagrees with MaxRecordBytes")
	}
}
