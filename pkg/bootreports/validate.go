package bootreports

import (
	"fmt"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// Limits of what a node may send and what a report keeps.
const (
	// MaxRecordBytes bounds one step record (its strings); a bigger one is
	// refused with 413. Nodes send at most MaxLogTailBytes of log.
	MaxRecordBytes = 8 << 10
	// MaxSteps bounds the steps of one boot; a record of one more is refused.
	MaxSteps = 64
	// maxLogTails bounds the failed steps whose log tail a report keeps
	// (the latest): a report stays under ~40 KiB.
	maxLogTails = 8
	// maxStepDuration bounds a reported duration.
	maxStepDuration = 24 * time.Hour
)

var (
	stepName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9._]{0,61}[a-z0-9])?$`)
	bootID   = regexp.MustCompile(`^[A-Za-z0-9-]{0,64}$`)
	revision = regexp.MustCompile(`^[0-9]{0,20}$`)
	version  = regexp.MustCompile(`^[A-Za-z0-9.+_-]{0,63}$`)
)

// RecordSize is the size of a step record that counts against MaxRecordBytes.
func RecordSize(s *osm.BootStepSpec) int {
	return len(s.Step) + len(s.Phase) + len(s.BootID) + len(s.Profile.Namespace) + len(s.Profile.Name) +
		len(s.Profile.Version) + len(s.MachineDeploymentRevision) + len(s.LogTail)
}

// TooLarge returns an error when a step record is over MaxRecordBytes.
func TooLarge(s *osm.BootStepSpec) error {
	if n := RecordSize(s); n > MaxRecordBytes {
		return fmt.Errorf("step record of %d bytes: at most %d (send the last %d lines and %d bytes of a step's output)",
			n, MaxRecordBytes, MaxLogTailLines, MaxLogTailBytes)
	}
	return nil
}

// Validate checks a step record. The values its errors quote are scrubbed
// (of known too): errors reach the node's answer and logs.
func Validate(s *osm.BootStepSpec, known *Known) field.ErrorList {
	var errs field.ErrorList
	shown := func(v string) string { return Scrub(v, known) }
	spec := field.NewPath("spec")
	if !stepName.MatchString(s.Step) {
		errs = append(errs, field.Invalid(spec.Child("step"), shown(s.Step),
			"must be 1-63 lower-case letters, digits, '-', '.' or '_', starting and ending with a letter or digit"))
	}
	switch s.Phase {
	case osm.StepPhaseStarted:
		if s.ExitCode != nil || s.Duration != nil {
			errs = append(errs, field.Forbidden(spec.Child("phase"), "a started step has no exit code or duration yet"))
		}
	case osm.StepPhaseSucceeded, osm.StepPhaseFailed:
	default:
		errs = append(errs, field.NotSupported(spec.Child("phase"), osm.StepPhase(shown(string(s.Phase))),
			[]osm.StepPhase{osm.StepPhaseStarted, osm.StepPhaseSucceeded, osm.StepPhaseFailed}))
	}
	if c := s.ExitCode; c != nil {
		switch {
		case *c < 0 || *c > 255:
			errs = append(errs, field.Invalid(spec.Child("exitCode"), *c, "must be 0-255"))
		case *c != 0 && s.Phase == osm.StepPhaseSucceeded:
			errs = append(errs, field.Invalid(spec.Child("exitCode"), *c, "a succeeded step exits with 0"))
		}
	}
	if d := s.Duration; d != nil && (d.Duration < 0 || d.Duration > maxStepDuration) {
		errs = append(errs, field.Invalid(spec.Child("duration"), d.Duration.String(), "must be between 0 and 24h"))
	}
	if !bootID.MatchString(s.BootID) {
		errs = append(errs, field.Invalid(spec.Child("bootID"), shown(s.BootID), "must be at most 64 letters, digits and '-'"))
	}
	if !revision.MatchString(s.MachineDeploymentRevision) {
		errs = append(errs, field.Invalid(spec.Child("machineDeploymentRevision"), shown(s.MachineDeploymentRevision), "must be a number"))
	}
	profile := spec.Child("profile")
	if s.Profile.Name != "" {
		for _, msg := range validation.IsDNS1123Subdomain(s.Profile.Name) {
			errs = append(errs, field.Invalid(profile.Child("name"), shown(s.Profile.Name), msg))
		}
	}
	if s.Profile.Namespace != "" {
		for _, msg := range validation.IsDNS1123Label(s.Profile.Namespace) {
			errs = append(errs, field.Invalid(profile.Child("namespace"), shown(s.Profile.Namespace), msg))
		}
	}
	if !version.MatchString(s.Profile.Version) {
		errs = append(errs, field.Invalid(profile.Child("version"), shown(s.Profile.Version), "must be at most 63 letters, digits, '.', '+', '_' and '-'"))
	}
	return errs
}
