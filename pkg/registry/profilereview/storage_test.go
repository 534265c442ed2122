package profilereview

import (
	"context"
	"errors"
	"strings"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/tools/cache"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed/changefeedtest"
	overlaylisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/overlays"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

// previewer renders an MD as one file naming the profile's version and the
// overlays, and the candidate's version or overlay in a preview; MDs named
// "broken" fail with the candidate.
type previewer struct{}

func (previewer) Resolve(_ context.Context, md *clusterv1alpha1.MachineDeployment) *resolve.Rendered {
	return rendered(md, "v1", nil)
}

func (previewer) Preview(_ context.Context, md *clusterv1alpha1.MachineDeployment, c *resolve.Candidate, _ resolve.Audience) *resolve.Rendered {
	if md.Name == "broken" {
		return resolve.NewFailed(osm.ProfileReference{}, nil, errors.New("osp-ubuntu: provisioningConfig file /etc/x: template: line 1: boom"))
	}
	if c.OSP != nil {
		return rendered(md, c.OSP.Spec.Version, nil)
	}
	return rendered(md, "v1", c.Overlay)
}

func rendered(md *clusterv1alpha1.MachineDeployment, version string, o *overlaysv1alpha1.OperatingSystemProfileOverlay) *resolve.Rendered {
	text := "version " + version + "\ntoken REDACTED\n"
	var refs []osm.OverlayReference
	if o != nil {
		text += "overlay " + o.Name + "\n"
		refs = []osm.OverlayReference{{Namespace: o.Namespace, Name: o.Name, Generation: o.Generation}}
	}
	cfg := &osm.OperatingSystemConfigSpec{CloudProvider: osm.CloudProviderSpec{Name: "aws"}, ProvisioningConfig: osm.OSCConfig{
		Files: []osm.File{{Path: "/etc/x", Content: osm.FileContent{Inline: &osm.FileContentInline{Data: text}}}}}}
	b, _ := resolve.NewPayload(osm.PayloadFormatCloudInit, []byte("bootstrap "+md.Name))
	p, _ := resolve.NewPayload(osm.PayloadFormatCloudInit, []byte("provisioning real-token "+text))
	out, _ := resolve.NewRendered(osm.ProfileReference{Name: "osp-ubuntu", Version: version}, cfg, b, p)
	out.ViewBootstrap, _ = resolve.NewPayload(osm.PayloadFormatCloudInit, []byte("bootstrap "+md.Name))
	out.ViewProvisioning, _ = resolve.NewPayload(osm.PayloadFormatCloudInit, []byte("provisioning REDACTED "+text))
	out.Overlays = refs
	return out
}

// namespaces allows alice to get OSCs and provisioningpayloads in the
// namespaces it holds, and viewer OSCs only.
type namespaces map[string]bool

func (n namespaces) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetVerb() != "get" || a.GetAPIGroup() != "osm.k8c.io" || !n[a.GetNamespace()] {
		return authorizer.DecisionNoOpinion, "", nil
	}
	switch user := a.GetUser().GetName(); {
	case a.GetResource() == "operatingsystemconfigs" && (user == "alice" || user == "viewer"),
		a.GetResource() == "provisioningpayloads" && user == "alice":
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func newREST(t *testing.T, ovs ...*overlaysv1alpha1.OperatingSystemProfileOverlay) *REST {
	t.Helper()
	mds := machinecontrollertest.Lister{
		machinecontrollertest.MD("team-a", "pool", "osp-ubuntu", map[string]string{"pool": "a"}),
		machinecontrollertest.MD("team-a", "broken", "osp-ubuntu", nil),
		machinecontrollertest.MD("team-a", "flatcar", "osp-flatcar", nil),
		machinecontrollertest.MD("team-b", "secret", "osp-ubuntu", nil),
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range ovs {
		if err := indexer.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	feed := changefeedtest.New(1)
	return NewREST(Config{
		ProfileNamespace: "kube-system", MachineDeployments: mds, Resolver: previewer{},
		Overlays:   &overlays.Selector{ServerNamespace: "kube-system", Overlays: overlaylisters.NewOperatingSystemProfileOverlayLister(indexer)},
		Authorizer: namespaces{"team-a": true}, Feed: feed.Feed,
	})
}

func create(t *testing.T, r *REST, spec osm.ProfileReviewSpec) (*osm.ProfileReview, error) {
	t.Helper()
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "alice"})
	obj, err := r.Create(ctx, &osm.ProfileReview{Spec: spec}, nil, &metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*osm.ProfileReview), nil
}

func names(pr *osm.ProfileReview) string {
	var out []string
	for _, m := range pr.Status.MachineDeployments {
		out = append(out, m.Namespace+"/"+m.Name)
	}
	return strings.Join(out, ",")
}

// TestReviewProfile: the MDs of the profile the caller may read, compared;
// team-b's MD is neither reviewed nor mentioned.
func TestReviewProfile(t *testing.T) {
	r := newREST(t)
	candidate := &ospv1alpha1.OperatingSystemProfile{ObjectMeta: metav1.ObjectMeta{Name: "osp-ubuntu", UID: "the-real-one", ResourceVersion: "5"}}
	candidate.Spec.Version = "v2"
	pr, err := create(t, r, osm.ProfileReviewSpec{OperatingSystemProfile: candidate})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(pr); got != "team-a/broken,team-a/pool" {
		t.Fatalf("reviewed %s, want team-a/broken,team-a/pool", got)
	}
	if pr.Status.Reviewed != 2 || pr.Status.Changed != 1 || pr.Status.Failed != 1 {
		t.Errorf("status %d reviewed, %d changed, %d failed", pr.Status.Reviewed, pr.Status.Changed, pr.Status.Failed)
	}
	broken, pool := pr.Status.MachineDeployments[0], pr.Status.MachineDeployments[1]
	if broken.Changed || !strings.Contains(broken.Error, "boom") {
		t.Errorf("broken: %+v", broken)
	}
	if !pool.Changed || len(pool.Files) != 1 || pool.Files[0].Change != osm.ItemChanged ||
		!strings.Contains(pool.Files[0].Diff, "-version v1\n+version v2\n") || pool.Bootstrap.UserDataLimit != 16384 {
		t.Errorf("pool: %+v", pool)
	}
	if strings.Contains(pool.Files[0].Diff, "real-token") {
		t.Error("the review shows the payloads, not the view")
	}
	if candidate.UID != "the-real-one" {
		t.Error("the review changed the posted object")
	}
	table, err := r.ConvertToTable(context.Background(), pr, nil)
	if err != nil || len(table.Rows) != 2 || table.Rows[1].Cells[2] != "true" || table.Rows[1].Cells[3] != "+0 ~1 -0" {
		t.Errorf("table %+v, %v", table, err)
	}
	if _, err := r.ConvertToTable(context.Background(), &osm.OperatingSystemConfig{}, nil); err == nil {
		t.Error("an OSC converted to a review table")
	}
}

// TestReviewOverlay: the MDs the overlay selects now and would select,
// narrowed by the spec's selector.
func TestReviewOverlay(t *testing.T) {
	current := &overlaysv1alpha1.OperatingSystemProfileOverlay{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "ca", Generation: 3}}
	current.Spec.Profiles = []string{"osp-flatcar"}
	r := newREST(t, current)
	candidate := current.DeepCopy()
	candidate.Spec.Profiles = []string{"osp-ubuntu"}
	pr, err := create(t, r, osm.ProfileReviewSpec{Overlay: candidate})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(pr); got != "team-a/broken,team-a/flatcar,team-a/pool" {
		t.Errorf("reviewed %s", got)
	}
	for _, m := range pr.Status.MachineDeployments {
		if m.Name == "pool" && (len(m.Overlays) != 1 || m.Overlays[0].Generation != 1) {
			t.Errorf("the candidate renders as generation 1 of its own: %+v", m.Overlays)
		}
	}
	pr, err = create(t, r, osm.ProfileReviewSpec{Overlay: candidate, MachineDeploymentSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "a"}}})
	if err != nil || names(pr) != "team-a/pool" {
		t.Errorf("narrowed: %v, %v", names(pr), err)
	}
}

func TestReviewRefusesBadSpecs(t *testing.T) {
	r := newREST(t)
	reachOut := &overlaysv1alpha1.OperatingSystemProfileOverlay{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "x"}}
	reachOut.Spec.Profiles, reachOut.Spec.Namespaces = []string{"osp-ubuntu"}, []string{"team-b"}
	unparsed := &overlaysv1alpha1.OperatingSystemProfileOverlay{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "y"}}
	unparsed.Spec.Profiles = []string{"osp-ubuntu"}
	unparsed.Spec.BootstrapConfig.Templates = map[string]string{"t": "{{ nope }}"}
	for _, tc := range []struct {
		name string
		spec osm.ProfileReviewSpec
		want string
	}{
		{"nothing to review", osm.ProfileReviewSpec{}, "exactly one of operatingSystemProfile and overlay"},
		{"both", osm.ProfileReviewSpec{OperatingSystemProfile: &ospv1alpha1.OperatingSystemProfile{}, Overlay: reachOut}, "exactly one of"},
		{"overlay beyond its reach", osm.ProfileReviewSpec{Overlay: reachOut}, "reaches only its own MachineDeployments"},
		{"overlay that does not parse", osm.ProfileReviewSpec{Overlay: unparsed}, `function "nope" not defined`},
		{"overlay without namespace", osm.ProfileReviewSpec{Overlay: &overlaysv1alpha1.OperatingSystemProfileOverlay{ObjectMeta: metav1.ObjectMeta{Name: "z"}}}, "spec.overlay.metadata: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := create(t, r, tc.spec)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want 422 with %q", err, tc.want)
			}
		})
	}
	if _, err := r.Create(context.Background(), &osm.ProfileReview{}, nil, &metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
		t.Errorf("no user: %v", err)
	}
}
