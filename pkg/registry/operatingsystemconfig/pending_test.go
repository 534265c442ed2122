package operatingsystemconfig

import (
	"context"
	"fmt"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed/changefeedtest"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/registrytest"
)

// A new MD whose tokens the syncer has not created yet is Pending, not an error.
func TestPendingIsNotAnError(t *testing.T) {
	mds := machinecontrollertest.Lister{machinecontrollertest.MD("a", "new", "osp-ubuntu", nil)}
	// Wrapped as the resolver wraps credential errors.
	renderer := &registrytest.Resolver{Errors: map[string]error{"new": fmt.Errorf("machinedeployment a/new: no credentials: %w", registrytest.ErrPending)}}
	r := NewREST(mds, renderer, changefeedtest.New(10).Feed, nil)
	obj, err := r.Get(genericapirequest.WithNamespace(context.Background(), "a"), "new", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	osc := obj.(*osm.OperatingSystemConfig)
	if osc.Status.RenderError != "" || osc.Status.Pending != registrytest.ErrPending.Reason {
		t.Errorf("status: renderError %q, pending %q", osc.Status.RenderError, osc.Status.Pending)
	}
	table, err := r.ConvertToTable(context.Background(), osc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := table.Rows[0].Cells[9], "Pending: waiting for the syncer to create tokens"; got != want {
		t.Errorf("status column %q, want %q", got, want)
	}
}
