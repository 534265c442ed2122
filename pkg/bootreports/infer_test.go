package bootreports

import (
	"strings"
	"testing"
	"time"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

func TestCompleteFromNodeCompletesOnlyAProvisioningReport(t *testing.T) {
	_, provisioning := apply(t, nil, started("packages"), ended("packages", osm.StepPhaseSucceeded, 0, time.Second, ""), started("kubelet-started"))
	at := t0.Add(time.Minute)
	out := CompleteFromNode(provisioning, at)
	r := out.Report
	if r == nil {
		t.Fatal("a Provisioning report was not completed")
	}
	if r.Status.State != osm.BootStateSucceeded || r.Status.Reason != osm.ReasonNodeRegistered ||
		r.Status.CompletionTime == nil || !r.Status.CompletionTime.Time.Equal(at) {
		t.Errorf("state %s, reason %q, completion %v", r.Status.State, r.Status.Reason, r.Status.CompletionTime)
	}
	if want := "inferred: node registered after 60s, no final record (last: step kubelet-started running)"; r.Status.Message != want {
		t.Errorf("message %q, want %q", r.Status.Message, want)
	}
	if provisioning.Status.State != osm.BootStateProvisioning || provisioning.Status.Reason != "" {
		t.Error("the old report was modified")
	}
	if out.Provisioned != 0 || out.Failed {
		t.Errorf("an inference observed as a record: %+v", out)
	}

	// What the node said stays: a failure, a success, no report.
	_, failed := apply(t, nil, started("packages"), ended("packages", osm.StepPhaseFailed, 100, time.Second, "E: oops"))
	final := ended("kubelet-started", osm.StepPhaseSucceeded, 0, time.Second, "")
	final.Final = true
	_, succeeded := apply(t, nil, started("kubelet-started"), final)
	for name, r := range map[string]*osm.BootReport{"failed": failed, "succeeded": succeeded, "none": nil} {
		if out := CompleteFromNode(r, at); out.Report != nil {
			t.Errorf("%s report changed to %s %q", name, out.Report.Status.State, out.Report.Status.Reason)
		}
	}
}

func TestARecordWinsOverTheInference(t *testing.T) {
	_, r := apply(t, nil, started("kubelet-started"))
	inferred := CompleteFromNode(r, t0.Add(time.Minute)).Report

	// A late record of a step that is not the end keeps the inference (the
	// Node is there) and lands in its step.
	late, err := Apply(inferred, "pool", "pool-abc", started("kubelet-configured"), nil, t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if st := late.Report.Status; st.State != osm.BootStateSucceeded || st.Reason != osm.ReasonNodeRegistered ||
		findStep(&st, "kubelet-configured") == nil || !strings.HasPrefix(st.Message, "inferred:") {
		t.Errorf("after a late record: %s %q %q", st.State, st.Reason, st.Message)
	}

	// The final record ends it as the node says.
	final := ended("kubelet-started", osm.StepPhaseSucceeded, 0, time.Second, "")
	final.Final = true
	done, err := Apply(late.Report, "pool", "pool-abc", final, nil, t0.Add(3*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if st := done.Report.Status; st.State != osm.BootStateSucceeded || st.Reason != "" ||
		!st.CompletionTime.Time.Equal(t0.Add(3*time.Minute)) || st.Message != "provisioned in 3m" || done.Provisioned != 3*time.Minute {
		t.Errorf("after the final record: %s %q %v %q %v", st.State, st.Reason, st.CompletionTime, st.Message, done.Provisioned)
	}

	// A failure too.
	failed, err := Apply(inferred, "pool", "pool-abc", ended("kubelet-started", osm.StepPhaseFailed, 1, time.Second, "E: no"), nil, t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if st := failed.Report.Status; st.State != osm.BootStateFailed || st.Reason != "" {
		t.Errorf("after a failure: %s %q", st.State, st.Reason)
	}

	// And a new boot starts afresh.
	next := started("packages")
	next.BootID = "boot-2"
	again, err := Apply(inferred, "pool", "pool-abc", next, nil, t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if st := again.Report.Status; st.State != osm.BootStateProvisioning || st.Reason != "" || st.Boots != 2 {
		t.Errorf("after a new boot: %s %q boots %d", st.State, st.Reason, st.Boots)
	}
}

func TestSecretKeepsTheReason(t *testing.T) {
	_, r := apply(t, nil, started("kubelet-started"))
	r = CompleteFromNode(r, t0.Add(time.Minute)).Report
	s, err := Secret(machinecontroller.Ref{Namespace: "team", Name: "pool"}, r)
	if err != nil {
		t.Fatal(err)
	}
	if s.Labels[StateLabel] != string(osm.BootStateSucceeded) {
		t.Errorf("state label %q", s.Labels[StateLabel])
	}
	got, err := FromSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Reason != osm.ReasonNodeRegistered {
		t.Errorf("reason %q after a round trip", got.Status.Reason)
	}
}
