package e2e

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNewMDIsPendingNotFailed: from the moment a new MD exists until the syncer
// has created its tokens, its OSC is Pending (never a render error) and its
// payloads answer 503 with the reason; then it renders. How long the Pending
// phase lasts depends on the syncer, so it is checked whenever it is seen.
func TestNewMDIsPendingNotFailed(t *testing.T) {
	ns := syncerNamespace(t)
	osp := "e2e-pending-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	ctx := testContext(t)
	createMD(t, syncerMD(ns, "fresh", osp, "1"))

	const want = "waiting for the syncer to create tokens"
	deadline := time.Now().Add(time.Minute)
	pending := 0
	for {
		osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).Get(ctx, "fresh", metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			// The API's informer has not seen the MD yet.
		case err != nil:
			t.Fatal(err)
		case osc.Status.RenderError != "":
			t.Fatalf("a new MD shows a render error: %q", osc.Status.RenderError)
		case osc.Status.Pending != "":
			if osc.Status.Pending != want {
				t.Errorf("status.pending %q, want %q", osc.Status.Pending, want)
			}
			checkPendingPayload(t, ns, want)
			pending++
		case osc.Status.ProvisioningPayloadSize > 0:
			t.Logf("rendered after %d Pending reads", pending)
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the new MD did not render within a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkPendingPayload checks a payload GET while pending, unless the MD has
// rendered in between. The raw REST client does not retry the 503.
func checkPendingPayload(t *testing.T, ns, reason string) {
	t.Helper()
	res := env.osm.OsmV1alpha1().RESTClient().Get().Namespace(ns).Resource("provisioningpayloads").
		Name("fresh-bootstrap").MaxRetries(0).Do(testContext(t))
	var code int
	res.StatusCode(&code)
	err := res.Error()
	if err == nil {
		return // rendered meanwhile
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || code != 503 || !strings.Contains(status.Status().Message, reason) {
		t.Errorf("payload of a pending MD: HTTP %d, %v; want 503 saying %q", code, err, reason)
		return
	}
	if d := status.Status().Details; d == nil || d.RetryAfterSeconds < 1 {
		t.Errorf("503 without retry-after: %s", fmt.Sprint(d))
	}
}
