package provisioningpayload

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"

	"k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed/changefeedtest"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/registrytest"
)

func newTestREST() (*REST, *changefeedtest.Feed) {
	mds := machinecontrollertest.Lister{
		machinecontrollertest.MD("a", "ubuntu", "osp-ubuntu", nil),
		machinecontrollertest.MD("a", "broken", "osp-broken", nil),
		machinecontrollertest.MD("a", "x-bootstrap", "osp-ubuntu", nil),
	}
	feed := changefeedtest.New(10)
	renderer := &registrytest.Resolver{Errors: map[string]error{"broken": registrytest.ErrBroken}}
	return NewREST(mds, renderer, feed.Feed), feed
}

func TestGet(t *testing.T) {
	tests := []struct {
		name       string
		object     string
		wantType   osm.PayloadType
		wantStatus int32
		wantLimit  int64
	}{
		{name: "bootstrap", object: "ubuntu-bootstrap", wantType: osm.PayloadTypeBootstrap, wantLimit: 16384},
		{name: "provisioning has no user-data limit", object: "ubuntu-provisioning", wantType: osm.PayloadTypeProvisioning},
		{name: "MD named like a payload", object: "x-bootstrap-provisioning", wantType: osm.PayloadTypeProvisioning},
		{name: "no type suffix", object: "ubuntu", wantStatus: http.StatusNotFound},
		{name: "unknown MD", object: "nope-bootstrap", wantStatus: http.StatusNotFound},
		{name: "render error is a 500 with the message", object: "broken-bootstrap", wantStatus: http.StatusInternalServerError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newTestREST()
			ctx := genericapirequest.WithNamespace(context.Background(), "a")
			obj, err := r.Get(ctx, tc.object, &metav1.GetOptions{})
			if tc.wantStatus != 0 {
				var status errors.APIStatus
				if !errorsAs(err, &status) || status.Status().Code != tc.wantStatus {
					t.Fatalf("want status %d, got %v", tc.wantStatus, err)
				}
				if tc.wantStatus == http.StatusInternalServerError && !strings.Contains(err.Error(), registrytest.ErrBroken.Error()) {
					t.Errorf("error %q lacks the render error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := obj.(*osm.ProvisioningPayload)
			if p.Name != tc.object || p.Spec.Type != tc.wantType || p.Spec.UserDataLimit != tc.wantLimit {
				t.Errorf("got %s type %s limit %d", p.Name, p.Spec.Type, p.Spec.UserDataLimit)
			}
			if p.Spec.Size != int64(len(p.Spec.UserData)) || len(p.Spec.SHA256) != 64 {
				t.Errorf("size %d for %d bytes, sha256 %q", p.Spec.Size, len(p.Spec.UserData), p.Spec.SHA256)
			}
		})
	}
}

func TestList(t *testing.T) {
	tests := []struct {
		name   string
		fields string
		want   []string
	}{
		{name: "broken MDs have no payloads", want: []string{"ubuntu-bootstrap", "ubuntu-provisioning", "x-bootstrap-bootstrap", "x-bootstrap-provisioning"}},
		{name: "field selector on the payload name", fields: "metadata.name=ubuntu-provisioning", want: []string{"ubuntu-provisioning"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newTestREST()
			opts := &metainternalversion.ListOptions{}
			if tc.fields != "" {
				opts.FieldSelector = fields.ParseSelectorOrDie(tc.fields)
			}
			obj, err := r.List(genericapirequest.WithNamespace(context.Background(), "a"), opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range obj.(*osm.ProvisioningPayloadList).Items {
				got = append(got, p.Name)
			}
			if !slices.Equal(got, tc.want) {
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
	if len(table.Rows) != 4 {
		t.Fatalf("got %d rows", len(table.Rows))
	}
	boot, prov := table.Rows[0].Cells, table.Rows[1].Cells
	if boot[5] != "16.0KiB" || boot[6] != "Yes" {
		t.Errorf("bootstrap limit %v fits %v", boot[5], boot[6])
	}
	if prov[5] != "-" || prov[6] != "n/a" {
		t.Errorf("provisioning limit %v fits %v", prov[5], prov[6])
	}
}

func TestWatchEmitsBothPayloads(t *testing.T) {
	r, feed := newTestREST()
	ctx := genericapirequest.WithNamespace(context.Background(), "a")
	w, err := r.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: "0", FieldSelector: fields.ParseSelectorOrDie("metadata.name=ubuntu-bootstrap")})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := <-w.ResultChan(); ev.Type != watch.Added || ev.Object.(*osm.ProvisioningPayload).Name != "ubuntu-bootstrap" {
		t.Fatalf("initial event %s %v", ev.Type, ev.Object)
	}
	feed.Publish(watch.Deleted, machinecontrollertest.MD("a", "ubuntu", "osp-ubuntu", nil))
	if ev := <-w.ResultChan(); ev.Type != watch.Deleted || ev.Object.(*osm.ProvisioningPayload).Name != "ubuntu-bootstrap" {
		t.Fatalf("got %s %v, want DELETED ubuntu-bootstrap", ev.Type, ev.Object)
	}
}

func TestUserDataLimit(t *testing.T) {
	if UserDataLimit("aws") != 16384 || UserDataLimit("vsphere") != 0 {
		t.Errorf("aws %d vsphere %d", UserDataLimit("aws"), UserDataLimit("vsphere"))
	}
}

func TestWatchBrokenPayloadsAreDeleted(t *testing.T) {
	r, feed := newTestREST()
	w, err := r.Watch(genericapirequest.WithNamespace(context.Background(), "a"), &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for range 4 { // ubuntu and x-bootstrap; broken has no payloads
		if ev := <-w.ResultChan(); ev.Type != watch.Added {
			t.Fatalf("initial event %s", ev.Type)
		}
	}
	// A change of boot reports is the OSC's, not the payloads'.
	ubuntu := machinecontrollertest.MD("a", "ubuntu", "osp-ubuntu", map[string]string{"pool": "x"})
	feed.PublishMachines(ubuntu)
	after := feed.Publish(watch.Modified, ubuntu).String()
	for range 2 {
		if ev := <-w.ResultChan(); ev.Type != watch.Modified || ev.Object.(*osm.ProvisioningPayload).ResourceVersion != after {
			t.Fatalf("got %s at %s, want MODIFIED at %s (no event for the reports)", ev.Type, ev.Object.(*osm.ProvisioningPayload).ResourceVersion, after)
		}
	}
	broken := machinecontrollertest.MD("a", "broken", "osp-broken", nil)
	feed.Publish(watch.Added, broken) // never rendered: not announced
	feed.Publish(watch.Modified, broken)
	for _, want := range []string{"broken-bootstrap", "broken-provisioning"} {
		ev := <-w.ResultChan()
		if p := ev.Object.(*osm.ProvisioningPayload); ev.Type != watch.Deleted || p.Name != want {
			t.Fatalf("got %s %s, want DELETED %s", ev.Type, p.Name, want)
		}
	}
}

// Only MDs on cloud provider edge have a join script: it is listed and served
// for them, a 404 for others, and gone (DELETED) when an MD leaves edge.
func TestEdgeScript(t *testing.T) {
	edge := machinecontrollertest.OnCloud(machinecontrollertest.MD("a", "edge", "osp-ubuntu", nil), "edge")
	mds := machinecontrollertest.Lister{edge, machinecontrollertest.OnCloud(machinecontrollertest.MD("a", "cloud", "osp-ubuntu", nil), "aws")}
	feed := changefeedtest.New(10)
	r := NewREST(mds, &registrytest.Resolver{}, feed.Feed)
	ctx := genericapirequest.WithNamespace(context.Background(), "a")
	obj, err := r.Get(ctx, "edge-edge-script", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := obj.(*osm.ProvisioningPayload); p.Spec.Type != osm.PayloadTypeEdgeScript || p.Spec.Format != osm.PayloadFormatShell || !strings.HasPrefix(p.Spec.UserData, "#!/bin/bash") {
		t.Errorf("edge script %+v", p.Spec)
	}
	if _, err := r.Get(ctx, "cloud-edge-script", &metav1.GetOptions{}); !errors.IsNotFound(err) {
		t.Errorf("a cloud MD's edge script: %v, want NotFound", err)
	}
	list, err := r.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list.(*osm.ProvisioningPayloadList).Items {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"cloud-bootstrap", "cloud-provisioning", "edge-bootstrap", "edge-provisioning", "edge-edge-script"}) {
		t.Errorf("listed %v", names)
	}

	w, err := r.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: "0", FieldSelector: fields.ParseSelectorOrDie("metadata.name=edge-edge-script")})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := <-w.ResultChan(); ev.Type != watch.Added {
		t.Fatalf("initial event %s", ev.Type)
	}
	moved := machinecontrollertest.OnCloud(machinecontrollertest.MD("a", "edge", "osp-ubuntu", nil), "aws")
	feed.PublishUpdate(edge, moved)
	if ev := <-w.ResultChan(); ev.Type != watch.Deleted || ev.Object.(*osm.ProvisioningPayload).Name != "edge-edge-script" {
		t.Fatalf("got %s %v, want DELETED edge-edge-script", ev.Type, ev.Object)
	}
}
