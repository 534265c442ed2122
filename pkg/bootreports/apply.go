package bootreports

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// Outcome is what one step record did to a report.
type Outcome struct {
	// Report is the report after the record.
	Report *osm.BootReport
	// Failed is set when the record is a step's failure (an Event and a
	// metric say so).
	Failed bool
	// Provisioned is, when the record completed provisioning, the time from
	// the boot's first record to it.
	Provisioned time.Duration
}

// ErrTooManySteps refuses a step beyond MaxSteps.
var ErrTooManySteps = fmt.Errorf("a boot reports at most %d steps", MaxSteps)

// Apply returns the report of machine, a machine of MachineDeployment md,
// after step, received at now: old (nil for none) is not modified. A record
// of another boot ID starts the steps again. step has been validated; its
// log tail is scrubbed (of the MD's known credentials too) and cut here.
func Apply(old *osm.BootReport, md, machine string, step *osm.BootStepSpec, known *Known, now time.Time) (Outcome, error) {
	r := &osm.BootReport{}
	if old != nil {
		r = old.DeepCopy()
	}
	at := metav1.NewTime(now)
	if r.Status.Boots == 0 || step.BootID != "" && r.Spec.BootID != "" && step.BootID != r.Spec.BootID {
		r.Status = osm.BootReportStatus{Boots: r.Status.Boots + 1, StartTime: &at}
	}
	r.Spec.MachineDeployment, r.Spec.Machine = md, machine
	if step.BootID != "" {
		r.Spec.BootID = step.BootID
	}
	if step.Profile.Name != "" || step.Profile.Version != "" {
		r.Spec.Profile = step.Profile
	}
	if step.MachineDeploymentRevision != "" {
		r.Spec.MachineDeploymentRevision = step.MachineDeploymentRevision
	}

	s := findStep(&r.Status, step.Step)
	if s == nil {
		if len(r.Status.Steps) >= MaxSteps {
			return Outcome{}, ErrTooManySteps
		}
		r.Status.Steps = append(r.Status.Steps, osm.BootReportStep{Name: step.Step})
		s = &r.Status.Steps[len(r.Status.Steps)-1]
	}
	record(s, step, known, at)
	r.Status.Step = step.Step
	r.Status.LastUpdateTime = &at
	keepLogTails(&r.Status, s.Name)

	before := r.Status.State
	r.Status.State = state(before, step)
	if r.Status.Reason == osm.ReasonNodeRegistered &&
		(r.Status.State != osm.BootStateSucceeded || step.Final && step.Phase == osm.StepPhaseSucceeded) {
		// The node's own end wins over the one inferred from its Node.
		r.Status.Reason, before = "", osm.BootStateProvisioning
	}
	out := Outcome{Report: r, Failed: step.Phase == osm.StepPhaseFailed}
	switch {
	case r.Status.State == osm.BootStateProvisioning:
		r.Status.CompletionTime = nil
	case r.Status.State != before || r.Status.CompletionTime == nil:
		r.Status.CompletionTime = &at
		if r.Status.State == osm.BootStateSucceeded && r.Status.StartTime != nil {
			out.Provisioned = now.Sub(r.Status.StartTime.Time)
		}
	}
	r.Status.Message = message(&r.Status, s)
	return out, nil
}

func findStep(st *osm.BootReportStatus, name string) *osm.BootReportStep {
	for i := range st.Steps {
		if st.Steps[i].Name == name {
			return &st.Steps[i]
		}
	}
	return nil
}

// record sets s from one record of it received at.
func record(s *osm.BootReportStep, step *osm.BootStepSpec, known *Known, at metav1.Time) {
	if step.Phase == osm.StepPhaseStarted {
		*s = osm.BootReportStep{Name: s.Name, Phase: osm.StepPhaseStarted, StartTime: &at, Attempts: s.Attempts + 1, LastFailure: lastFailure(s)}
		return
	}
	if s.Phase != osm.StepPhaseStarted {
		// An end without a start of this attempt.
		s.LastFailure = lastFailure(s)
		s.Attempts++
		s.StartTime = nil
	}
	s.Phase, s.FinishTime, s.ExitCode, s.Duration = step.Phase, &at, step.ExitCode, step.Duration
	if s.StartTime == nil {
		start := at
		if step.Duration != nil {
			start = metav1.NewTime(at.Add(-step.Duration.Duration))
		}
		s.StartTime = &start
	}
	s.LogTail = ""
	if step.Phase == osm.StepPhaseFailed {
		s.LogTail = Tail(Scrub(step.LogTail, known))
	}
}

// lastFailure is the failure a new attempt of s keeps: s's own when its
// last attempt failed, else the one it kept before.
func lastFailure(s *osm.BootReportStep) *osm.BootStepFailure {
	if s.Phase != osm.StepPhaseFailed {
		return s.LastFailure
	}
	return &osm.BootStepFailure{StartTime: s.StartTime, FinishTime: s.FinishTime, Duration: s.Duration, ExitCode: s.ExitCode, LogTail: s.LogTail}
}

// keepLogTails drops the log tails of all but the latest maxLogTails
// failures (a step's, then its last failure's), the one of the record's
// step current always kept.
func keepLogTails(st *osm.BootReportStatus, current string) {
	kept := 0
	keep := func(tail *string) {
		if *tail == "" {
			return
		}
		if kept++; kept > maxLogTails {
			*tail = ""
		}
	}
	if s := findStep(st, current); s != nil && s.LogTail != "" {
		kept++
	}
	for i := len(st.Steps) - 1; i >= 0; i-- {
		s := &st.Steps[i]
		if s.Name != current {
			keep(&s.LogTail)
		}
		if s.LastFailure != nil {
			keep(&s.LastFailure.LogTail)
		}
	}
}

// state is the report's state after step: Failed when step is a failure,
// Succeeded once the step that ends provisioning succeeded, Provisioning
// otherwise. A record after a failure (the step started again, as osm-setup
// retries a failed provisioning, or a later step) makes a Failed report
// Provisioning again; the failure stays in its step.
func state(before osm.BootState, step *osm.BootStepSpec) osm.BootState {
	switch {
	case step.Phase == osm.StepPhaseFailed:
		return osm.BootStateFailed
	case before == osm.BootStateSucceeded || step.Final && step.Phase == osm.StepPhaseSucceeded:
		return osm.BootStateSucceeded
	}
	return osm.BootStateProvisioning
}

// message says in one line what the report's state is.
func message(st *osm.BootReportStatus, last *osm.BootReportStep) string {
	switch st.State {
	case osm.BootStateFailed:
		return FailureMessage(last)
	case osm.BootStateSucceeded:
		if st.Reason == osm.ReasonNodeRegistered {
			return inferredMessage(st, last)
		}
		if st.StartTime != nil && st.CompletionTime != nil {
			return "provisioned in " + duration.HumanDuration(st.CompletionTime.Sub(st.StartTime.Time))
		}
		return "provisioned"
	}
	msg := "step " + last.Name + " succeeded"
	if last.Phase == osm.StepPhaseStarted {
		msg = "step " + last.Name + " running"
	}
	if failed := lastFailed(st); failed != nil {
		msg += ", again after " + FailureMessage(failed)
	}
	return msg
}

// lastFailed returns the failed attempt received last, as a step, nil if
// none of this boot failed.
func lastFailed(st *osm.BootReportStatus) *osm.BootReportStep {
	var last *osm.BootReportStep
	var at time.Time
	for i := range st.Steps {
		s := &st.Steps[i]
		f := s.LastFailure
		if s.Phase == osm.StepPhaseFailed {
			f = &osm.BootStepFailure{FinishTime: s.FinishTime, ExitCode: s.ExitCode, LogTail: s.LogTail}
		}
		if f == nil || f.FinishTime == nil || last != nil && !f.FinishTime.After(at) {
			continue
		}
		last, at = &osm.BootReportStep{Name: s.Name, ExitCode: f.ExitCode, LogTail: f.LogTail}, f.FinishTime.Time
	}
	return last
}

// FailureMessage says which step failed, with which exit code and, from
// its log tail, the first error line.
func FailureMessage(s *osm.BootReportStep) string {
	msg := "step " + s.Name + " failed"
	if s.ExitCode != nil {
		msg += fmt.Sprintf(" with exit code %d", *s.ExitCode)
	}
	if line := FirstErrorLine(s.LogTail); line != "" {
		msg += ": " + line
	}
	return msg
}
