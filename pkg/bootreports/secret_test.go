package bootreports

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

func TestSecretRoundTrip(t *testing.T) {
	ref := machinecontroller.Ref{Namespace: "team", Name: "pool"}
	_, r := apply(t, nil, started("packages"), ended("packages", osm.StepPhaseFailed, 100, time.Second, "E: oops"))
	s, err := Secret(ref, r)
	if err != nil {
		t.Fatal(err)
	}
	if s.Namespace != Namespace || s.Name != SecretName("team", "pool-abc") || s.Type != SecretType {
		t.Errorf("secret %s/%s of type %s", s.Namespace, s.Name, s.Type)
	}
	if owner, ok := machinecontroller.Owner(s); !ok || owner != ref {
		t.Errorf("owner %v, %v", owner, ok)
	}
	if !Selector("team").Matches(labels.Set(s.Labels)) || Selector("other").Matches(labels.Set(s.Labels)) {
		t.Errorf("selector does not find it by namespace: %v", s.Labels)
	}
	if s.Labels[StateLabel] != "Failed" || s.Annotations[RevisionAnnotation] != "3" || !LastUpdate(s).Equal(t0.Add(time.Second)) {
		t.Errorf("summary metadata: %v %v", s.Labels, s.Annotations)
	}

	s.UID, s.ResourceVersion, s.CreationTimestamp = "uid-1", "42", metav1.NewTime(t0)
	got, err := FromSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "pool-abc" || got.Namespace != "team" || got.UID != "uid-1" || got.ResourceVersion != "42" ||
		!labels.Equals(got.Labels, labels.Set{StateLabel: "Failed"}) {
		t.Errorf("metadata %+v", got.ObjectMeta)
	}
	// Times are stored to the second, as every API time is.
	if !equality.Semantic.DeepEqual(got.Spec, r.Spec) || !equality.Semantic.DeepEqual(got.Status, r.Status) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got.Status, r.Status)
	}

	// Someone else's Secret is no report.
	s.Annotations[MachineAnnotation] = "team/another"
	if _, err := FromSecret(s); err == nil {
		t.Error("a Secret whose name is not its machine's was read as a report")
	}
}

func TestSummarize(t *testing.T) {
	report := func(state osm.BootState, revision string) metav1.Object {
		return &metav1.ObjectMeta{Labels: map[string]string{StateLabel: string(state)},
			Annotations: map[string]string{RevisionAnnotation: revision}}
	}
	got := Summarize([]metav1.Object{
		report(osm.BootStateSucceeded, "3"), report(osm.BootStateSucceeded, "3"), report(osm.BootStateSucceeded, "2"),
		report(osm.BootStateFailed, "3"), report(osm.BootStateProvisioning, "3"),
	}, "3")
	if want := (osm.MachineSummary{Current: 2, Older: 1, Failed: 1, Provisioning: 1}); *got != want {
		t.Errorf("summary %+v, want %+v", *got, want)
	}
	if Summarize(nil, "3") != nil {
		t.Error("a summary of no reports")
	}
	a, b := report(osm.BootStateProvisioning, "3"), report(osm.BootStateProvisioning, "3")
	if SummaryChanged(a, b) {
		t.Error("a new step of a report changes no summary")
	}
	if !SummaryChanged(a, report(osm.BootStateFailed, "3")) || !SummaryChanged(a, report(osm.BootStateProvisioning, "4")) {
		t.Error("a new state or revision changes the summary")
	}
}
