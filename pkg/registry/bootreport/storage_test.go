package bootreport

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	ktesting "k8s.io/client-go/testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
)

// reportsOf posts records so that team/pool-a failed and team/pool-b
// provisions.
func reportsOf(t *testing.T) *stepHarness {
	t.Helper()
	h := newStepHarness(Limits{})
	for _, p := range []struct {
		machine string
		spec    osm.BootStepSpec
	}{
		{"pool-a", failed("packages", "E: boom")},
		{"pool-b", osm.BootStepSpec{Step: "packages", Phase: osm.StepPhaseStarted, MachineDeploymentRevision: "4",
			Profile: osm.ProfileReference{Name: "osp-ubuntu", Version: "v1.6.0"}}},
	} {
		if _, err := h.post("fetch:pool", "team", p.machine, p.spec); err != nil {
			t.Fatal(err)
		}
	}
	// A Secret of the namespace that is no report.
	if _, err := h.client.CoreV1().Secrets(bootreports.Namespace).Create(context.Background(),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "foreign"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return h
}

func names(list *osm.BootReportList) []string {
	var out []string
	for _, r := range list.Items {
		out = append(out, r.Namespace+"/"+r.Name)
	}
	return out
}

func TestGetAndList(t *testing.T) {
	h := reportsOf(t)
	team := genericapirequest.WithNamespace(context.Background(), "team")
	if r := h.report(t, "team", "pool-a"); r.Status.State != osm.BootStateFailed || r.Spec.MachineDeployment != "pool" {
		t.Errorf("report %+v", r)
	}
	for _, tc := range []struct{ namespace, name string }{{"team", "nope"}, {"other", "pool-a"}} {
		ctx := genericapirequest.WithNamespace(context.Background(), tc.namespace)
		if _, err := h.reports.Get(ctx, tc.name, &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s/%s: %v, want NotFound", tc.namespace, tc.name, err)
		}
	}

	var lists []*ktesting.ListActionImpl
	h.client.PrependReactor("list", "secrets", func(a ktesting.Action) (bool, runtime.Object, error) {
		l := a.(ktesting.ListActionImpl)
		lists = append(lists, &l)
		return false, nil, nil
	})
	tests := []struct {
		ctx     context.Context
		options *metainternalversion.ListOptions
		want    []string
	}{
		{team, nil, []string{"team/pool-a", "team/pool-b"}},
		{context.Background(), nil, []string{"team/pool-a", "team/pool-b"}},
		{genericapirequest.WithNamespace(context.Background(), "other"), nil, nil},
		{team, &metainternalversion.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{bootreports.StateLabel: "Failed"})}, []string{"team/pool-a"}},
		// A label reports do not have selects none of them.
		{team, &metainternalversion.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": "osm-apiserver"})}, nil},
		{team, &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "pool-b")}, []string{"team/pool-b"}},
	}
	for i, tc := range tests {
		obj, err := h.reports.List(tc.ctx, tc.options)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(obj.(*osm.BootReportList)); !equal(got, tc.want) {
			t.Errorf("list %d: %v, want %v", i, got, tc.want)
		}
	}
	// What kube-apiserver is asked: the reports of the namespace, by type.
	first := lists[0].GetListRestrictions()
	if !first.Labels.Matches(labels.Set{"app.kubernetes.io/managed-by": "osm-apiserver", "osm.k8c.io/purpose": "boot-report",
		"osm.k8c.io/machine-deployment-namespace": "team"}) || first.Labels.Matches(labels.Set{"osm.k8c.io/purpose": "boot-report"}) {
		t.Errorf("secrets listed with %s", first.Labels)
	}
	if got := lists[0].GetListRestrictions().Fields.String(); got != "type=osm.k8c.io/boot-report" {
		t.Errorf("secrets listed with fields %q", got)
	}
	if got := lists[5].GetListRestrictions().Fields.String(); got != "metadata.name="+bootreports.SecretName("team", "pool-b")+",type=osm.k8c.io/boot-report" {
		t.Errorf("a list by name asks for %q", got)
	}
}

func TestWatch(t *testing.T) {
	h := reportsOf(t)
	team := genericapirequest.WithNamespace(context.Background(), "team")
	w, err := h.reports.Watch(team, &metainternalversion.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{bootreports.StateLabel: "Failed"})})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// The failed pool-a first (the fake's initial events), then pool-b
	// failing: reports, of the selection only.
	if _, err := h.post("fetch:pool", "team", "pool-b", failed("packages", "E: boom")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pool-a", "pool-b"} {
		select {
		case ev := <-w.ResultChan():
			r, ok := ev.Object.(*osm.BootReport)
			if !ok || r.Name != want || r.Status.State != osm.BootStateFailed {
				t.Fatalf("event %s %#v, want %s", ev.Type, ev.Object, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no event of %s", want)
		}
	}
}

func TestConvertToTable(t *testing.T) {
	h := reportsOf(t)
	obj, err := h.reports.List(genericapirequest.WithNamespace(context.Background(), "team"), nil)
	if err != nil {
		t.Fatal(err)
	}
	table, err := h.reports.ConvertToTable(context.Background(), obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 2 {
		t.Fatalf("%d rows", len(table.Rows))
	}
	a := table.Rows[0].Cells
	if len(a) != len(table.ColumnDefinitions) || a[0] != "pool-a" || a[1] != "pool" || a[2] != "packages" || a[3] != "Failed" ||
		a[7] != "step packages failed with exit code 1: E: boom" || a[4] != "-" || a[8] != "-" {
		t.Errorf("row %v", a)
	}
	if b := table.Rows[1].Cells; b[3] != "Provisioning" || b[4] != "4" || b[5] == "-" || b[8] != "osp-ubuntu v1.6.0" || table.ColumnDefinitions[8].Priority != 1 {
		t.Errorf("row %v", b)
	}
	if _, err := h.reports.ConvertToTable(context.Background(), &osm.OperatingSystemConfig{}, nil); err == nil {
		t.Error("an OSC converted to a report table")
	}
	if h.reports.GetSingularName() != "bootreport" || !h.reports.NamespaceScoped() {
		t.Error("metadata")
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
