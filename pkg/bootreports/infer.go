package bootreports

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// CompleteFromNode returns the report old after its machine's Node
// registered, at now: a report still Provisioning becomes Succeeded with
// reason NodeRegistered, so that a node whose last records were lost (an
// outage of osm-apiserver, a node that gave up sending) is not shown stuck.
// Any other report (Succeeded, Failed, none) is the node's own truth and
// stays: the Outcome has no Report then. A later record of the node wins
// over the inference (Apply).
func CompleteFromNode(old *osm.BootReport, now time.Time) Outcome {
	if old == nil || old.Status.State != osm.BootStateProvisioning {
		return Outcome{}
	}
	r := old.DeepCopy()
	at := metav1.NewTime(now)
	r.Status.State, r.Status.Reason, r.Status.CompletionTime = osm.BootStateSucceeded, osm.ReasonNodeRegistered, &at
	r.Status.Message = message(&r.Status, findStep(&r.Status, r.Status.Step))
	return Outcome{Report: r}
}

// inferredMessage is the message of a report completed from its Node:
// when, and what the node said last.
func inferredMessage(st *osm.BootReportStatus, last *osm.BootReportStep) string {
	msg := "inferred: node registered"
	if st.StartTime != nil && st.CompletionTime != nil {
		msg += " after " + duration.HumanDuration(st.CompletionTime.Sub(st.StartTime.Time))
	}
	if last == nil {
		return msg + ", no final record"
	}
	phase := "succeeded"
	if last.Phase == osm.StepPhaseStarted {
		phase = "running"
	}
	return msg + ", no final record (last: step " + last.Name + " " + phase + ")"
}
