package operatingsystemconfig

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"

	"k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed/changefeedtest"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/registrytest"
)

func newTestREST() (*REST, *changefeedtest.Feed) {
	mds := machinecontrollertest.Lister{
		machinecontrollertest.MD("a", "ubuntu", "osp-ubuntu", map[string]string{"pool": "x"}),
		machinecontrollertest.MD("a", "broken", "osp-broken", nil),
		machinecontrollertest.MD("b", "flatcar", "osp-flatcar", map[string]string{"pool": "y"}),
	}
	feed := changefeedtest.New(10)
	renderer := &registrytest.Resolver{Errors: map[string]error{"broken": registrytest.ErrBroken}}
	return NewREST(mds, renderer, feed.Feed, summaries{"ubuntu": {Current: 2, Failed: 1}}), feed
}

// summaries are the machine summaries of MDs by name.
type summaries map[string]osm.MachineSummary

func (m summaries) Summary(md *clusterv1alpha1.MachineDeployment) *osm.MachineSummary {
	if s, ok := m[md.Name]; ok {
		return &s
	}
	return nil
}

func TestGet(t *testing.T) {
	tests := []struct {
		name, namespace, object string
		wantNotFound            bool
		wantError               string
	}{
		{name: "rendered", namespace: "a", object: "ubuntu"},
		{name: "render error is in the status, not an error", namespace: "a", object: "broken", wantError: registrytest.ErrBroken.Error()},
		{name: "unknown name", namespace: "a", object: "nope", wantNotFound: true},
		{name: "other namespace", namespace: "b", object: "ubuntu", wantNotFound: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newTestREST()
			ctx := genericapirequest.WithNamespace(context.Background(), tc.namespace)
			obj, err := r.Get(ctx, tc.object, &metav1.GetOptions{})
			if tc.wantNotFound {
				if !errors.IsNotFound(err) {
					t.Fatalf("want NotFound, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			osc := obj.(*osm.OperatingSystemConfig)
			if osc.Name != tc.object || osc.Namespace != tc.namespace {
				t.Errorf("got %s/%s", osc.Namespace, osc.Name)
			}
			if osc.Status.RenderError != tc.wantError {
				t.Errorf("renderError = %q, want %q", osc.Status.RenderError, tc.wantError)
			}
			if osc.Status.MachineDeploymentRevision != "3" {
				t.Errorf("revision = %q, want 3", osc.Status.MachineDeploymentRevision)
			}
			if osc.ResourceVersion == "" {
				t.Error("no resourceVersion")
			}
		})
	}
}

func TestList(t *testing.T) {
	tests := []struct {
		name      string
		namespace string
		labels    string
		fields    string
		want      []string
	}{
		{name: "all namespaces, sorted, broken included", want: []string{"a/broken", "a/ubuntu", "b/flatcar"}},
		{name: "one namespace", namespace: "b", want: []string{"b/flatcar"}},
		{name: "label selector", labels: "pool=x", want: []string{"a/ubuntu"}},
		{name: "field selector on name", fields: "metadata.name=flatcar", want: []string{"b/flatcar"}},
		{name: "field selector on namespace", fields: "metadata.namespace=a", want: []string{"a/broken", "a/ubuntu"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newTestREST()
			ctx := genericapirequest.WithNamespace(context.Background(), tc.namespace)
			opts := &metainternalversion.ListOptions{}
			if tc.labels != "" {
				opts.LabelSelector = labels.SelectorFromSet(labels.Set(mustParse(t, tc.labels)))
			}
			if tc.fields != "" {
				opts.FieldSelector = fields.ParseSelectorOrDie(tc.fields)
			}
			obj, err := r.List(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, item := range obj.(*osm.OperatingSystemConfigList).Items {
				got = append(got, item.Namespace+"/"+item.Name)
			}
			if !equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestConvertToTable(t *testing.T) {
	r, _ := newTestREST()
	obj, err := r.List(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	table, err := r.ConvertToTable(context.Background(), obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 3 {
		t.Fatalf("got %d rows, want 3", len(table.Rows))
	}
	for _, row := range table.Rows {
		if len(row.Cells) != len(table.ColumnDefinitions) {
			t.Errorf("row %v has %d cells for %d columns", row.Cells[0], len(row.Cells), len(table.ColumnDefinitions))
		}
	}
	broken, ubuntu := table.Rows[0].Cells, table.Rows[1].Cells
	if got := broken[9].(string); got != "Error: "+registrytest.ErrBroken.Error() {
		t.Errorf("broken status = %q", got)
	}
	if got := ubuntu[4].(string); got != "osp-ubuntu@v1.0.0" {
		t.Errorf("profile = %q", got)
	}
	if got := ubuntu[9].(string); got != "Rendered" {
		t.Errorf("status = %q", got)
	}
	if got, want := ubuntu[8].(string), "2 current, 1 failed"; got != want {
		t.Errorf("machines = %q, want %q", got, want)
	}
	if got := broken[8].(string); got != "-" {
		t.Errorf("machines of an MD without reports = %q", got)
	}
	if got := ubuntu[10].(string); got != "-" {
		t.Errorf("overlays = %q, want -", got)
	}
	osc := &osm.OperatingSystemConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "pool"}}
	osc.Status.Overlays = []osm.OverlayReference{{Namespace: "kube-system", Name: "company-ca", Generation: 2}, {Namespace: "team-a", Name: "ntp", Generation: 1}}
	if got := overlayNames(osc); got != "kube-system/company-ca,ntp" {
		t.Errorf("overlays = %q", got)
	}
	if _, err := r.ConvertToTable(context.Background(), &osm.ProvisioningPayload{}, nil); err == nil {
		t.Error("a payload converted to an OSC table")
	}
}

func TestMetadata(t *testing.T) {
	r, _ := newTestREST()
	if r.GetSingularName() == "" || !r.NamespaceScoped() || r.ShortNames()[0] != "osc" {
		t.Errorf("singular %q, namespaced %v, short names %v", r.GetSingularName(), r.NamespaceScoped(), r.ShortNames())
	}
}

func TestWatch(t *testing.T) {
	r, feed := newTestREST()
	mds := machinecontrollertest.Lister{machinecontrollertest.MD("a", "ubuntu", "osp-ubuntu", nil)}
	ctx := genericapirequest.WithNamespace(context.Background(), "a")

	w, err := r.Watch(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, want := range []string{"broken", "ubuntu"} {
		ev := <-w.ResultChan()
		if ev.Type != watch.Added || ev.Object.(*osm.OperatingSystemConfig).Name != want {
			t.Fatalf("initial event %s %v, want ADDED %s", ev.Type, ev.Object.(*osm.OperatingSystemConfig).Name, want)
		}
	}
	before := feed.Publish(watch.Modified, machinecontrollertest.MD("b", "flatcar", "osp-flatcar", nil)) // other namespace
	pos := feed.Publish(watch.Modified, mds[0])
	ev := <-w.ResultChan()
	osc := ev.Object.(*osm.OperatingSystemConfig)
	if ev.Type != watch.Modified || osc.Name != "ubuntu" || osc.ResourceVersion != pos.String() {
		t.Fatalf("got %s %s rv %s, want MODIFIED ubuntu rv %s", ev.Type, osc.Name, osc.ResourceVersion, pos)
	}

	// A change of the machines' boot reports is a change of the OSC (its summary).
	pos = feed.PublishMachines(mds[0])
	ev = <-w.ResultChan()
	osc = ev.Object.(*osm.OperatingSystemConfig)
	if ev.Type != watch.Modified || osc.Name != "ubuntu" || osc.ResourceVersion != pos.String() || osc.Status.Machines == nil {
		t.Fatalf("after a report: %s %s rv %s machines %v, want MODIFIED ubuntu rv %s with a summary", ev.Type, osc.Name, osc.ResourceVersion, osc.Status.Machines, pos)
	}

	// Resuming from a version replays what came after it.
	w2, err := r.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: before.String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	if ev := <-w2.ResultChan(); ev.Type != watch.Modified || ev.Object.(*osm.OperatingSystemConfig).ResourceVersion == before.String() {
		t.Fatalf("resumed watch got %s %v", ev.Type, ev.Object)
	}

	// A version the feed no longer keeps is 410 Gone, as is one of an
	// earlier osm-apiserver (a plain number).
	for range 20 {
		feed.Publish(watch.Modified, mds[0])
	}
	for _, rv := range []string{before.String(), "588"} {
		if _, err := r.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: rv}); !errors.IsResourceExpired(err) {
			t.Fatalf("%s: want 410 Gone, got %v", rv, err)
		}
	}
	if _, err := r.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: "x"}); !errors.IsBadRequest(err) {
		t.Fatalf("want 400, got %v", err)
	}
	// A version the cluster has not issued is refused as kube-apiserver
	// refuses it: 504 "Too large resource version", and the client lists.
	future := feed.Position()
	future.Revs[0] += 1000
	_, err = r.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: future.String()})
	if !errors.IsTimeout(err) || !errors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		t.Fatalf("future version: want 504 Too large resource version, got %v", err)
	}
}

func TestWatchInitialEventsBookmark(t *testing.T) {
	yes := true
	tests := []struct {
		name         string
		opts         metainternalversion.ListOptions
		wantBookmark bool
	}{
		// What k8s.io/apiserver makes of a plain watch: no bookmark.
		{name: "plain", opts: metainternalversion.ListOptions{SendInitialEvents: &yes}},
		{name: "watch-list", opts: metainternalversion.ListOptions{SendInitialEvents: &yes, AllowWatchBookmarks: true}, wantBookmark: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, feed := newTestREST()
			w, err := r.Watch(genericapirequest.WithNamespace(context.Background(), "b"), &tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if ev := <-w.ResultChan(); ev.Type != watch.Added {
				t.Fatalf("first event %s", ev.Type)
			}
			feed.Publish(watch.Modified, machinecontrollertest.MD("b", "flatcar", "osp-flatcar", nil))
			ev := <-w.ResultChan()
			if got := ev.Type == watch.Bookmark; got != tc.wantBookmark {
				t.Fatalf("second event %s, want bookmark %v", ev.Type, tc.wantBookmark)
			}
			if tc.wantBookmark && ev.Object.(*osm.OperatingSystemConfig).Annotations[metav1.InitialEventsAnnotationKey] != "true" {
				t.Error("bookmark lacks the initial-events-end annotation")
			}
		})
	}
}

func TestWatchRelabelling(t *testing.T) {
	r, feed := newTestREST()
	selector := labels.SelectorFromSet(labels.Set{"pool": "x"})
	w, err := r.Watch(context.Background(), &metainternalversion.ListOptions{ResourceVersion: "0", LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := <-w.ResultChan(); ev.Type != watch.Added || ev.Object.(*osm.OperatingSystemConfig).Name != "ubuntu" {
		t.Fatalf("initial event %s %v", ev.Type, ev.Object)
	}
	in := machinecontrollertest.MD("a", "ubuntu", "osp-ubuntu", map[string]string{"pool": "x"})
	out := machinecontrollertest.MD("a", "ubuntu", "osp-ubuntu", map[string]string{"pool": "z"})
	feed.PublishUpdate(in, out)
	feed.PublishUpdate(out, out) // outside the selection before and after: nothing
	feed.PublishUpdate(out, in)
	for _, want := range []watch.EventType{watch.Deleted, watch.Added} {
		if ev := <-w.ResultChan(); ev.Type != want {
			t.Fatalf("event %s, want %s", ev.Type, want)
		}
	}
}

// A `kubectl get osc` LIST builds its rows from the outputs' summaries; they
// are the rows of the full objects.
func TestTableFromSummaries(t *testing.T) {
	r, _ := newTestREST()
	var ctx context.Context
	req := httptest.NewRequest(http.MethodGet, "/apis/osm.k8c.io/v1alpha1/operatingsystemconfigs", nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json")
	registry.WithTableHint(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) { ctx = req.Context() })).ServeHTTP(httptest.NewRecorder(), req)
	if !registry.TableOnly(ctx) {
		t.Fatal("kubectl's table request not marked")
	}
	tables := make([]*metav1.Table, 2)
	for i, ctx := range []context.Context{context.Background(), ctx} {
		obj, err := r.List(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tables[i], err = r.ConvertToTable(ctx, obj, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(tables[1].Rows) != 3 {
		t.Fatalf("%d rows, want 3", len(tables[1].Rows))
	}
	for i := range tables[0].Rows {
		if full, summary := fmt.Sprint(tables[0].Rows[i].Cells), fmt.Sprint(tables[1].Rows[i].Cells); full != summary {
			t.Errorf("row %d from the summary: %s, from the object: %s", i, summary, full)
		}
	}
	if files := tables[1].Rows[1].Object.Object.(*osm.OperatingSystemConfig).Spec.ProvisioningConfig.Files; len(files) != 0 {
		t.Errorf("the summary unpacked the config: %d files", len(files))
	}
}
