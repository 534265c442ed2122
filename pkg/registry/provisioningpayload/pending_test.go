package provisioningpayload

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"

	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed/changefeedtest"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/registrytest"
)

// A payload whose tokens the syncer has not created yet answers 503 with
// Retry-After and says why, so that clients retry instead of reporting a fault.
func TestGetPending(t *testing.T) {
	mds := machinecontrollertest.Lister{machinecontrollertest.MD("a", "new", "osp-ubuntu", nil)}
	renderer := &registrytest.Resolver{Errors: map[string]error{"new": fmt.Errorf("machinedeployment a/new: no credentials: %w", registrytest.ErrPending)}}
	r := NewREST(mds, renderer, changefeedtest.New(10).Feed)
	_, err := r.Get(genericapirequest.WithNamespace(context.Background(), "a"), "new-bootstrap", &metav1.GetOptions{})
	var status errors.APIStatus
	if !errorsAs(err, &status) {
		t.Fatalf("want a status error, got %v", err)
	}
	s := status.Status()
	if s.Code != http.StatusServiceUnavailable || s.Reason != metav1.StatusReasonServiceUnavailable {
		t.Errorf("code %d reason %s, want 503 ServiceUnavailable", s.Code, s.Reason)
	}
	if s.Details == nil || s.Details.RetryAfterSeconds < 1 || s.Details.Name != "new-bootstrap" {
		t.Errorf("details %+v, want the name and a retry-after", s.Details)
	}
	if !strings.Contains(s.Message, "pending: waiting for the syncer to create tokens") {
		t.Errorf("message %q does not say what it waits for", s.Message)
	}
}
