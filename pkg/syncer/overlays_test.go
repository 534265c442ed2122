package syncer

import (
	"context"
	"errors"
	"strings"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	osmfake "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned/fake"
	overlaylisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/overlays"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

// outcomes renders each MD as its name says: "conflict" fails with a
// conflict of overlays a and b, "fails-<overlay>" with that overlay's error,
// "pending" waits; the others render.
type outcomes struct{}

func (outcomes) Resolve(_ context.Context, md *clusterv1alpha1.MachineDeployment) *resolve.Rendered {
	switch {
	case md.Name == "conflict":
		return resolve.NewFailed(osm.ProfileReference{}, nil, &render.OverlayConflictError{
			Overlays: [2]string{"kube-system/a", "team/b"}, Config: "provisioningConfig", What: "file /etc/x"})
	case strings.HasPrefix(md.Name, "fails-"):
		return resolve.NewFailed(osm.ProfileReference{}, nil, &render.OverlayError{
			Overlay: "team/" + strings.TrimPrefix(md.Name, "fails-"), Err: errors.New("provisioningConfig file /etc/x: template: line 1: boom")})
	case md.Name == "pending":
		return &resolve.Rendered{Err: &resolve.PendingError{Reason: "waiting for the syncer to create tokens"}}
	}
	return &resolve.Rendered{}
}

func overlayController(t *testing.T, mds machinecontrollertest.Lister, ovs ...*overlaysv1alpha1.OperatingSystemProfileOverlay) (*Controller, *osmfake.Clientset) {
	t.Helper()
	informer := cache.NewSharedIndexInformer(nil, &overlaysv1alpha1.OperatingSystemProfileOverlay{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	client := osmfake.NewSimpleClientset()
	for _, o := range ovs {
		if err := informer.GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
		if _, err := client.OverlaysV1alpha1().OperatingSystemProfileOverlays(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	selector := &overlays.Selector{ServerNamespace: "kube-system", Overlays: overlaylisters.NewOperatingSystemProfileOverlayLister(informer.GetIndexer())}
	return &Controller{
		cfg: Config{Overlays: informer, OverlayClient: client.OverlaysV1alpha1(), OverlaySelector: selector, Resolver: outcomes{}, ProfileNamespace: "kube-system"},
		mds: mds,
	}, client
}

func teamOverlay(name string, spec func(*overlaysv1alpha1.OperatingSystemProfileOverlaySpec)) *overlaysv1alpha1.OperatingSystemProfileOverlay {
	o := &overlaysv1alpha1.OperatingSystemProfileOverlay{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, Generation: 2}}
	o.Spec.Profiles = []string{"osp-ubuntu"}
	if spec != nil {
		spec(&o.Spec)
	}
	return o
}

// TestOverlayStatus: Ready says Applied, Conflict (naming the other overlay
// and the MDs), RenderFailed (with the error) or Invalid, and counts the MDs
// the overlay selects.
func TestOverlayStatus(t *testing.T) {
	md := machinecontrollertest.MD
	for _, tc := range []struct {
		name    string
		overlay *overlaysv1alpha1.OperatingSystemProfileOverlay
		mds     machinecontrollertest.Lister
		reason  string
		message string
	}{
		{"applied", teamOverlay("b", nil), machinecontrollertest.Lister{md("team", "ok", "osp-ubuntu", nil), md("team", "pending", "osp-ubuntu", nil)},
			overlaysv1alpha1.ReasonApplied, "applied to 1 of the 2 MachineDeployments it selects (the others are pending or fail for reasons of their own)"},
		{"conflict", teamOverlay("b", nil), machinecontrollertest.Lister{md("team", "ok", "osp-ubuntu", nil), md("team", "conflict", "osp-ubuntu", nil)},
			overlaysv1alpha1.ReasonConflict, "overlay conflict: overlays kube-system/a and team/b both set file /etc/x in provisioningConfig, for 1 of 2 MachineDeployments (team/conflict); neither applies to them, and they keep their payloads"},
		{"render failed", teamOverlay("c", nil), machinecontrollertest.Lister{md("team", "fails-c", "osp-ubuntu", nil), md("team", "fails-other", "osp-ubuntu", nil)},
			overlaysv1alpha1.ReasonRenderFailed, "fails for 1 of 2 MachineDeployments (team/fails-c), which keep their payloads: overlay team/c: provisioningConfig file /etc/x: template: line 1: boom"},
		{"invalid", teamOverlay("d", func(s *overlaysv1alpha1.OperatingSystemProfileOverlaySpec) { s.Namespaces = []string{"other"} }), nil,
			overlaysv1alpha1.ReasonInvalid, "overlay team/d: invalid: spec.namespaces names other, but an overlay in namespace team reaches only its own MachineDeployments (overlays that reach other namespaces live in kube-system)"},
		{"does not parse", teamOverlay("e", func(s *overlaysv1alpha1.OperatingSystemProfileOverlaySpec) {
			s.ProvisioningConfig.Templates = map[string]string{"t": "{{ end }}"}
		}), nil, overlaysv1alpha1.ReasonInvalid, "overlay team/e: provisioningConfig template t: template: line 1: unexpected {{end}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, client := overlayController(t, tc.mds, tc.overlay)
			key := tc.overlay.Namespace + "/" + tc.overlay.Name
			if err := c.syncOverlay(context.Background(), key); err != nil {
				t.Fatal(err)
			}
			got, err := client.OverlaysV1alpha1().OperatingSystemProfileOverlays("team").Get(context.Background(), tc.overlay.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ready := meta.FindStatusCondition(got.Status.Conditions, overlaysv1alpha1.ConditionReady)
			if ready == nil || ready.Reason != tc.reason || ready.Message != tc.message || ready.ObservedGeneration != 2 {
				t.Fatalf("Ready %+v\nwant reason %s, message %q", ready, tc.reason, tc.message)
			}
			if want := metav1.ConditionStatus(map[bool]string{true: "True", false: "False"}[tc.reason == overlaysv1alpha1.ReasonApplied]); ready.Status != want {
				t.Errorf("status %s, want %s", ready.Status, want)
			}
			if got.Status.ObservedGeneration != 2 || got.Status.MachineDeployments != int32(len(tc.mds)) {
				t.Errorf("status %+v", got.Status)
			}

			// The same status again is not written.
			if err := c.cfg.Overlays.GetIndexer().Update(got); err != nil {
				t.Fatal(err)
			}
			client.ClearActions()
			if err := c.syncOverlay(context.Background(), key); err != nil {
				t.Fatal(err)
			}
			if actions := client.Actions(); len(actions) != 0 {
				t.Errorf("an unchanged status was written again: %v", actions)
			}
		})
	}
}
