package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// reviewFixture is a profile used by MDs in two namespaces, and one MD of
// another profile that no review of the first may mention.
type reviewFixture struct {
	osp, nsA, nsB string
}

func newReviewFixture(t *testing.T) reviewFixture {
	t.Helper()
	id := time.Now().UnixNano() % 1_000_000_000
	f := reviewFixture{osp: fmt.Sprintf("e2e-review-%d", id), nsA: createNamespace(t, fmt.Sprintf("review-a-%d", id)), nsB: createNamespace(t, fmt.Sprintf("review-b-%d", id))}
	applyProfile(t, e2eProfile(t, f.osp, "v1.0.0"))
	applyProfile(t, e2eProfile(t, f.osp+"-other", "v1.0.0"))
	createMD(t, syncerMD(f.nsA, "pool", f.osp, "1"))
	createMD(t, syncerMD(f.nsA, "other-profile", f.osp+"-other", "1"))
	createMD(t, syncerMD(f.nsB, "pool", f.osp, "1"))
	for _, ns := range []string{f.nsA, f.nsB} {
		payloadSecret(t, ns, "pool", "bootstrap", annotated("1", "v1.0.0"))
	}
	return f
}

// writeReview writes a ProfileReview manifest with spec and returns its path.
func writeReview(t testing.TB, spec map[string]any) string {
	t.Helper()
	data, err := yaml.Marshal(map[string]any{"apiVersion": "osm.k8c.io/v1alpha1", "kind": "ProfileReview", "spec": spec})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "review.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// candidateProfile is the fixture's profile at v2.0.0 with other node info.
func (f reviewFixture) candidateProfile(t *testing.T, nodeInfo string) map[string]any {
	t.Helper()
	osp := e2eProfile(t, f.osp, "v2.0.0")
	osp.Spec.ProvisioningConfig.Files[0].Content.Inline.Data = nodeInfo
	// A changed line with the token in it.
	osp.Spec.BootstrapConfig.Files[0].Content.Inline.Data = strings.Replace(osp.Spec.BootstrapConfig.Files[0].Content.Inline.Data, "curl -fsS ", "curl -fsSL ", 1)
	data, err := json.Marshal(osp)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func decodeReview(t *testing.T, out string) *osmv1alpha1.ProfileReview {
	t.Helper()
	var r osmv1alpha1.ProfileReview
	if err := yaml.UnmarshalStrict([]byte(out), &r); err != nil {
		t.Fatalf("kubectl create -o yaml printed no ProfileReview: %v\n%s", err, out)
	}
	return &r
}

func reviewed(r *osmv1alpha1.ProfileReview) string {
	var names []string
	for _, m := range r.Status.MachineDeployments {
		names = append(names, m.Namespace+"/"+m.Name)
	}
	return strings.Join(names, ",")
}

// TestProfileReview: `kubectl create -f review.yaml -o yaml` answers, for
// every MD of the candidate profile, what changes — with diffs of the view,
// never a token — and stores nothing; a candidate overlay adds a file; a
// candidate that breaks a template says so per MD.
func TestProfileReview(t *testing.T) {
	f := newReviewFixture(t)
	out := kubectl(t, "create", "-f", writeReview(t, map[string]any{
		"operatingSystemProfile": f.candidateProfile(t, "v2: kubelet {{ .KubeVersion }}\n")}), "-o", "yaml")
	r := decodeReview(t, out)
	if got, want := reviewed(r), f.nsA+"/pool,"+f.nsB+"/pool"; got != want {
		t.Fatalf("reviewed %s, want %s", got, want)
	}
	if r.Status.Reviewed != 2 || r.Status.Changed != 2 || r.Status.Failed != 0 {
		t.Errorf("status: %d reviewed, %d changed, %d failed", r.Status.Reviewed, r.Status.Changed, r.Status.Failed)
	}
	m := r.Status.MachineDeployments[0]
	var nodeInfo, fetch *osmv1alpha1.ItemReview
	for i := range m.Files {
		switch m.Files[i].Name {
		case "/etc/e2e/node-info":
			nodeInfo = &m.Files[i]
		case "/opt/bin/fetch-provisioning":
			fetch = &m.Files[i]
		}
	}
	if !m.Changed || nodeInfo == nil || nodeInfo.Change != osmv1alpha1.ItemChanged || fetch == nil || fetch.Config != "bootstrap" ||
		!strings.Contains(nodeInfo.Diff, "-kubelet v1.33.4 on aws\n+v2: kubelet v1.33.4\n") {
		t.Errorf("review of %s/pool: %+v", f.nsA, m)
	}
	if m.Bootstrap.UserDataLimit != 16384 || m.Bootstrap.SizeAfter <= m.Bootstrap.SizeBefore || m.Bootstrap.OverLimit {
		t.Errorf("bootstrap %+v", m.Bootstrap)
	}
	// The diff is of the view: a token is a placeholder there.
	bootstrap := payloadSecret(t, f.nsA, "pool", "bootstrap", annotated("1", "v1.0.0"))
	token := bearer(t, cloudConfigFile(t, string(bootstrap.Data[machinecontroller.SecretDataKey]), "/opt/bin/fetch-provisioning"))
	if strings.Contains(out, token) || !strings.Contains(fetch.Diff, "Bearer redact.redactedredacted") {
		t.Errorf("the review shows the fetch token, or no placeholder:\n%s", fetch.Diff)
	}
	// Nothing was stored: the profile and the Secrets are as they were.
	if got := kubectl(t, "get", "osp", "-n", "kube-system", f.osp, "-o", "jsonpath={.spec.version}"); got != "v1.0.0" {
		t.Errorf("profile version %s after the review", got)
	}
	assertSecretKept(t, f.nsA, "pool", bootstrap)

	t.Log("a candidate whose template does not execute")
	r = decodeReview(t, kubectl(t, "create", "-f", writeReview(t, map[string]any{
		"operatingSystemProfile": f.candidateProfile(t, "{{ .Nope }}\n"), "namespace": f.nsB}), "-o", "yaml"))
	if reviewed(r) != f.nsB+"/pool" || r.Status.Failed != 1 || r.Status.Changed != 0 ||
		!strings.Contains(r.Status.MachineDeployments[0].Error, "provisioningConfig file /etc/e2e/node-info: template: line 1: at <.Nope>") {
		t.Errorf("failing candidate: %+v", r.Status)
	}

	t.Log("a candidate overlay, never created")
	overlay := map[string]any{
		"apiVersion": "overlays.osm.k8c.io/v1alpha1", "kind": "OperatingSystemProfileOverlay",
		"metadata": map[string]any{"namespace": f.nsA, "name": "ca"},
		"spec": map[string]any{"profiles": []string{f.osp}, "provisioningConfig": map[string]any{"files": []any{map[string]any{
			"path": "/usr/local/share/ca-certificates/company.crt", "content": map[string]any{"inline": map[string]any{"data": "CA for {{ .CloudProviderName }}\n"}}}}}},
	}
	r = decodeReview(t, kubectl(t, "create", "-f", writeReview(t, map[string]any{"overlay": overlay}), "-o", "yaml"))
	if reviewed(r) != f.nsA+"/pool" || len(r.Status.MachineDeployments[0].Files) != 1 {
		t.Fatalf("overlay candidate: %+v", r.Status)
	}
	added := r.Status.MachineDeployments[0].Files[0]
	if added.Change != osmv1alpha1.ItemAdded || !strings.Contains(added.Diff, "+CA for aws\n") ||
		len(r.Status.MachineDeployments[0].Overlays) != 1 {
		t.Errorf("added file: %+v", r.Status.MachineDeployments[0])
	}
	if _, err := env.osm.OverlaysV1alpha1().OperatingSystemProfileOverlays(f.nsA).Get(context.Background(), "ca", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the candidate overlay exists: %v", err)
	}

	t.Log("the server-side table")
	body, err := yaml.YAMLToJSON([]byte(fmt.Sprintf("apiVersion: osm.k8c.io/v1alpha1\nkind: ProfileReview\nspec:\n  overlay: %s\n", mustJSON(t, overlay))))
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	err = env.osm.OsmV1alpha1().RESTClient().Post().Resource("profilereviews").Body(body).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(context.Background()).Into(&table)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 1 || table.Rows[0].Cells[1] != "pool" || table.Rows[0].Cells[3] != "+1 ~0 -0" {
		t.Errorf("table %+v", table.Rows)
	}
}

// TestProfileReviewAuthz: posting needs osm:profilereviews-creator, and a
// review names only MDs of namespaces where the caller may read OSCs.
func TestProfileReviewAuthz(t *testing.T) {
	f := newReviewFixture(t)
	spec := osmv1alpha1.ProfileReviewSpec{}
	candidate := e2eProfile(t, f.osp, "v2.0.0")
	spec.OperatingSystemProfile = candidate
	post := func(c interface {
		Create(context.Context, *osmv1alpha1.ProfileReview, metav1.CreateOptions) (*osmv1alpha1.ProfileReview, error)
	}) (*osmv1alpha1.ProfileReview, error) {
		return c.Create(context.Background(), &osmv1alpha1.ProfileReview{Spec: spec}, metav1.CreateOptions{})
	}

	readerOnly := clientFor(t, serviceAccountToken(t, f.nsA, "reader-only", grant{readerRole, f.nsA}))
	eventually(t, 30*time.Second, func() error {
		_, err := readerOnly.OsmV1alpha1().OperatingSystemConfigs(f.nsA).List(context.Background(), metav1.ListOptions{})
		return err
	})
	if _, err := post(readerOnly.OsmV1alpha1().ProfileReviews()); !apierrors.IsForbidden(err) {
		t.Errorf("without osm:profilereviews-creator: %v, want 403", err)
	}

	creatorReaderA := clientFor(t, serviceAccountToken(t, f.nsA, "creator-reader-a", grant{"osm:profilereviews-creator", ""}, grant{readerRole, f.nsA}))
	var r *osmv1alpha1.ProfileReview
	eventually(t, 30*time.Second, func() error {
		var err error
		r, err = post(creatorReaderA.OsmV1alpha1().ProfileReviews())
		return err
	})
	if reviewed(r) != f.nsA+"/pool" || r.Status.Reviewed != 1 {
		t.Errorf("a reader of %s sees %q (%d reviewed)", f.nsA, reviewed(r), r.Status.Reviewed)
	}
	if strings.Contains(fmt.Sprint(r), f.nsB) {
		t.Errorf("the review mentions %s", f.nsB)
	}

	creatorOnly := clientFor(t, serviceAccountToken(t, f.nsA, "creator-only", grant{"osm:profilereviews-creator", ""}))
	eventually(t, 30*time.Second, func() error {
		var err error
		r, err = post(creatorOnly.OsmV1alpha1().ProfileReviews())
		return err
	})
	if r.Status.Reviewed != 0 || len(r.Status.MachineDeployments) != 0 {
		t.Errorf("a caller who may read no OSC sees %q", reviewed(r))
	}
}

// bearer returns the token of the first "Bearer <token>" in user-data.
func bearer(t *testing.T, userData string) string {
	t.Helper()
	_, rest, ok := strings.Cut(userData, "Bearer ")
	if !ok {
		t.Fatal("no bearer token in the user-data")
	}
	end := strings.IndexAny(rest, "'\" \n")
	if end < 20 {
		t.Fatalf("no token after Bearer: %.40q", rest)
	}
	return rest[:end]
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// writeReviewB writes a ProfileReview manifest of an overlay candidate.
func writeReviewB(b testing.TB, o *overlaysv1alpha1.OperatingSystemProfileOverlay) string {
	b.Helper()
	data, err := json.Marshal(o)
	if err != nil {
		b.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		b.Fatal(err)
	}
	return writeReview(b, map[string]any{"overlay": m})
}
