package resolve

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	overlaylisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/overlays"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

func overlay(name string, generation int64, rv string) *overlaysv1alpha1.OperatingSystemProfileOverlay {
	return &overlaysv1alpha1.OperatingSystemProfileOverlay{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name, UID: types.UID("uid-overlay-" + name), Generation: generation, ResourceVersion: rv},
		Spec:       overlaysv1alpha1.OperatingSystemProfileOverlaySpec{Profiles: []string{"osp-ubuntu"}},
	}
}

// withOverlays gives the fixture's resolver an overlay informer's indexer.
func withOverlays(t *testing.T, f *fixture, ovs ...*overlaysv1alpha1.OperatingSystemProfileOverlay) cache.Indexer {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range ovs {
		if err := indexer.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	f.resolver.cfg.Overlays = &overlays.Selector{ServerNamespace: "kube-system", Overlays: overlaylisters.NewOperatingSystemProfileOverlayLister(indexer)}
	return indexer
}

// TestOverlaysShapeTheRender: the overlays that apply reach the renderer in
// order and are named in the output; a new generation renders again, a
// status update (a new resourceVersion) does not.
func TestOverlaysShapeTheRender(t *testing.T) {
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	var seen []string
	f.resolver.cfg.Render = func(in render.Input) (*render.Result, error) {
		if !in.View {
			seen = seen[:0]
			for _, o := range in.Overlays {
				seen = append(seen, o.Name)
			}
		}
		return f.renderer.Render(in)
	}
	indexer := withOverlays(t, f, overlay("b-ntp", 1, "5"), overlay("a-ca", 3, "7"))
	out := f.resolver.Resolve(context.Background(), md("osp-ubuntu"))
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	if strings.Join(seen, ",") != "a-ca,b-ntp" {
		t.Errorf("renderer saw overlays %v, want a-ca,b-ntp", seen)
	}
	want := []osm.OverlayReference{{Namespace: "kube-system", Name: "a-ca", Generation: 3}, {Namespace: "kube-system", Name: "b-ntp", Generation: 1}}
	if len(out.Overlays) != 2 || out.Overlays[0] != want[0] || out.Overlays[1] != want[1] {
		t.Errorf("output names overlays %+v, want %+v", out.Overlays, want)
	}
	calls := f.renderer.calls.Load()

	if err := indexer.Update(overlay("a-ca", 3, "8")); err != nil {
		t.Fatal(err)
	}
	f.resolver.Resolve(context.Background(), md("osp-ubuntu"))
	if got := f.renderer.calls.Load(); got != calls {
		t.Errorf("a status update of an overlay rendered again (%d renders, want %d)", got, calls)
	}
	if err := indexer.Update(overlay("a-ca", 4, "9")); err != nil {
		t.Fatal(err)
	}
	if out := f.resolver.Resolve(context.Background(), md("osp-ubuntu")); out.Overlays[0].Generation != 4 {
		t.Errorf("after a new generation: %+v", out.Overlays)
	}
	if got := f.renderer.calls.Load(); got != calls+1 {
		t.Errorf("a new overlay generation: %d renders, want %d", got, calls+1)
	}
}

// TestInvalidOverlayFailsItsMDs: an overlay the MD cannot do without fails
// its render with the overlay's error.
func TestInvalidOverlayFailsItsMDs(t *testing.T) {
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	bad := overlay("bad", 1, "1")
	bad.Namespace = "kube-system"
	bad.Spec.MachineDeploymentSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "In"}}}
	withOverlays(t, f, bad)
	out := f.resolver.Resolve(context.Background(), md("osp-ubuntu"))
	var oe *render.OverlayError
	if !errors.As(out.Err, &oe) || oe.Overlay != "kube-system/bad" {
		t.Fatalf("got %v, want the overlay's error", out.Err)
	}
}

// TestPreviewCachesNothing: a preview renders with the candidate in place
// of the overlay (or profile) of its name, every time, and leaves the cached
// output as it was.
func TestPreviewCachesNothing(t *testing.T) {
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	withOverlays(t, f, overlay("a-ca", 1, "1"))
	before := f.resolver.Resolve(context.Background(), md("osp-ubuntu"))
	candidate := overlay("a-ca", 2, "")
	candidate.UID = "review-1"
	profile := osp("kube-system", "osp-ubuntu", "v2.0.0", "")
	profile.UID = "review-1"
	for range 2 {
		got := f.resolver.Preview(context.Background(), md("osp-ubuntu"), &Candidate{OSP: profile, Overlay: candidate}, Payloads)
		if got.Err != nil || got.Profile.Version != "v2.0.0" || len(got.Overlays) != 1 || got.Overlays[0].Generation != 2 {
			t.Fatalf("preview: %+v, %v", got.Overlays, got.Err)
		}
	}
	calls := f.renderer.calls.Load()
	after := f.resolver.Resolve(context.Background(), md("osp-ubuntu"))
	if after != before || f.renderer.calls.Load() != calls {
		t.Error("a preview changed what Resolve serves")
	}
}
