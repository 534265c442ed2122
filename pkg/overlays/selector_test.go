package overlays

import (
	"errors"
	"slices"
	"strings"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	overlaylisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

func md(namespace, name, profile string, labels map[string]string) *clusterv1alpha1.MachineDeployment {
	return &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{
		Namespace: namespace, Name: name, Labels: labels,
		Annotations: map[string]string{machinecontroller.AnnotationOSP: profile},
	}}
}

func ov(namespace, name string, profiles []string, mutate ...func(*Overlay)) *Overlay {
	o := &Overlay{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	o.Spec.Profiles = profiles
	for _, m := range mutate {
		m(o)
	}
	return o
}

func selector(t *testing.T, overlays ...*Overlay) *Selector {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range overlays {
		if err := indexer.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return &Selector{ServerNamespace: "kube-system", Overlays: overlaylisters.NewOperatingSystemProfileOverlayLister(indexer)}
}

func names(overlays []*Overlay) []string {
	var out []string
	for _, o := range overlays {
		out = append(out, o.Namespace+"/"+o.Name)
	}
	return out
}

// TestForSelectsAndOrders: the server's namespace's overlays first, then
// the MD's namespace's, each by name; by profile (name or namespace/name),
// label selector and reach.
func TestForSelectsAndOrders(t *testing.T) {
	gpu := &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "gpu"}}
	s := selector(t,
		ov("team-a", "b-ntp", []string{"osp-ubuntu"}),
		ov("team-a", "a-ca", []string{"kube-system/osp-ubuntu"}),
		ov("team-a", "gpu-only", []string{"osp-ubuntu"}, func(o *Overlay) { o.Spec.MachineDeploymentSelector = gpu }),
		ov("team-a", "flatcar", []string{"osp-flatcar"}),
		ov("team-a", "other-ns-profile", []string{"team-a/osp-ubuntu"}),
		ov("team-b", "not-ours", []string{"osp-ubuntu"}),
		ov("kube-system", "z-company-ca", []string{"osp-ubuntu", "osp-flatcar"}),
		ov("kube-system", "only-team-b", []string{"osp-ubuntu"}, func(o *Overlay) { o.Spec.Namespaces = []string{"team-b"} }),
	)
	for _, tc := range []struct {
		md   *clusterv1alpha1.MachineDeployment
		want []string
	}{
		{md("team-a", "pool", "osp-ubuntu", nil), []string{"kube-system/z-company-ca", "team-a/a-ca", "team-a/b-ntp"}},
		{md("team-a", "gpus", "osp-ubuntu", map[string]string{"pool": "gpu"}), []string{"kube-system/z-company-ca", "team-a/a-ca", "team-a/b-ntp", "team-a/gpu-only"}},
		{md("team-b", "pool", "osp-ubuntu", nil), []string{"kube-system/only-team-b", "kube-system/z-company-ca", "team-b/not-ours"}},
		{md("team-c", "pool", "osp-rhel", nil), nil},
	} {
		got, err := s.For(tc.md)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(names(got), tc.want) {
			t.Errorf("%s/%s: got %v, want %v", tc.md.Namespace, tc.md.Name, names(got), tc.want)
		}
	}
}

// TestTenancy: an overlay outside the server's namespace that names another
// namespace is invalid: it reaches no other namespace, and the MDs of its own
// it would apply to fail with its error rather than render without it.
func TestTenancy(t *testing.T) {
	reachOut := ov("team-a", "reach-out", []string{"osp-ubuntu"}, func(o *Overlay) { o.Spec.Namespaces = []string{"team-a", "team-b"} })
	s := selector(t, reachOut)
	got, err := s.For(md("team-b", "pool", "osp-ubuntu", nil))
	if err != nil || len(got) != 0 {
		t.Errorf("team-b's MD: %v, %v; want no overlay", names(got), err)
	}
	_, err = s.For(md("team-a", "pool", "osp-ubuntu", nil))
	var oe *render.OverlayError
	if !errors.As(err, &oe) || oe.Overlay != "team-a/reach-out" || !strings.Contains(err.Error(), "reaches only its own MachineDeployments (overlays that reach other namespaces live in kube-system)") {
		t.Errorf("team-a's MD: %v", err)
	}
	mds := machines.NewLister(indexer(t, md("team-a", "pool", "osp-ubuntu", nil), md("team-b", "pool", "osp-ubuntu", nil)))
	reached, err := s.MachineDeployments(reachOut, mds)
	if err != nil || len(reached) != 1 || reached[0].Namespace != "team-a" {
		t.Errorf("reaches %v, %v; want team-a/pool only", reached, err)
	}
}

func TestInvalidSelector(t *testing.T) {
	bad := ov("team-a", "bad", []string{"osp-ubuntu"}, func(o *Overlay) {
		o.Spec.MachineDeploymentSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "pool", Operator: metav1.LabelSelectorOpIn}}}
	})
	_, err := selector(t, bad).For(md("team-a", "pool", "osp-ubuntu", nil))
	if err == nil || !strings.Contains(err.Error(), "overlay team-a/bad: invalid: spec.machineDeploymentSelector: ") {
		t.Errorf("got %v", err)
	}
}

func TestMachineDeployments(t *testing.T) {
	mds := machines.NewLister(indexer(t,
		md("team-a", "a", "osp-ubuntu", nil), md("team-b", "b", "osp-ubuntu", nil), md("team-c", "c", "osp-ubuntu", nil),
		md("team-b", "flatcar", "osp-flatcar", nil)))
	s := selector(t)
	for _, tc := range []struct {
		o    *Overlay
		want []string
	}{
		{ov("kube-system", "all", []string{"osp-ubuntu"}), []string{"team-a/a", "team-b/b", "team-c/c"}},
		{ov("kube-system", "some", []string{"osp-ubuntu"}, func(o *Overlay) { o.Spec.Namespaces = []string{"team-b", "team-c"} }), []string{"team-b/b", "team-c/c"}},
		{ov("team-b", "own", []string{"osp-ubuntu", "osp-flatcar"}), []string{"team-b/b", "team-b/flatcar"}},
	} {
		got, err := s.MachineDeployments(tc.o, mds)
		if err != nil {
			t.Fatal(err)
		}
		var refs []string
		for _, m := range got {
			refs = append(refs, m.Namespace+"/"+m.Name)
		}
		slices.Sort(refs)
		if !slices.Equal(refs, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.o.Name, refs, tc.want)
		}
	}
}

func indexer(t *testing.T, mds ...*clusterv1alpha1.MachineDeployment) cache.Indexer {
	t.Helper()
	i := informers.NewMachineDeployments(nil, "kube-system").GetIndexer()
	for _, m := range mds {
		if err := i.Add(m); err != nil {
			t.Fatal(err)
		}
	}
	return i
}
