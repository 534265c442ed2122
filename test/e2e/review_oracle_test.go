package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// TestProfileReviewNoOracle: a tenant ServiceAccount with view and
// osm:profilereviews-creator in its namespace (no provisioningpayloads)
// (and osm:operatingsystemconfigs-reader, which view aggregates where
// kube-controller-manager runs; the test cluster has none) posts two candidate overlays that differ only in a branch on the MD's
// fetch token's first characters, the real ones and wrong ones, and gets
// byte-identical answers.
func TestProfileReviewNoOracle(t *testing.T) {
	f := newReviewFixture(t)
	bootstrap := payloadSecret(t, f.nsA, "pool", "bootstrap", annotated("1", "v1.0.0"))
	token := bearer(t, cloudConfigFile(t, string(bootstrap.Data[machinecontroller.SecretDataKey]), "/opt/bin/fetch-provisioning"))
	right := token[:12]
	wrong := token[:11] + "#"

	viewer := clientFor(t, serviceAccountToken(t, f.nsA, "tenant-viewer", grant{"view", f.nsA}, grant{readerRole, f.nsA}, grant{"osm:profilereviews-creator", ""}))
	eventually(t, 30*time.Second, func() error {
		_, err := viewer.OsmV1alpha1().OperatingSystemConfigs(f.nsA).List(context.Background(), metav1.ListOptions{})
		return err
	})
	candidate := func(guess string) *overlaysv1alpha1.OperatingSystemProfileOverlay {
		o := &overlaysv1alpha1.OperatingSystemProfileOverlay{ObjectMeta: metav1.ObjectMeta{Namespace: f.nsA, Name: "guess"}}
		o.Spec.Profiles = []string{f.osp}
		o.Spec.ProvisioningConfig.Files = []ospv1alpha1.File{{Path: "/etc/guess", Content: ospv1alpha1.FileContent{Inline: &ospv1alpha1.FileContentInline{
			Data: `{{ if hasPrefix "` + guess + `" .Token }}{{ repeat 997 "x" }}{{ end }}guessed` + "\n"}}}}
		return o
	}
	answer := func(guess string) string {
		var r *osmv1alpha1.ProfileReview
		eventually(t, 30*time.Second, func() error {
			var err error
			r, err = viewer.OsmV1alpha1().ProfileReviews().Create(context.Background(),
				&osmv1alpha1.ProfileReview{Spec: osmv1alpha1.ProfileReviewSpec{Overlay: candidate(guess)}}, metav1.CreateOptions{})
			if err == nil && r.Status.Reviewed == 0 {
				// The server's authorizer caches the denial from before the binding.
				err = fmt.Errorf("no MD reviewed yet")
			}
			return err
		})
		if r.Status.Reviewed != 1 || reviewed(r) != f.nsA+"/pool" {
			t.Fatalf("the viewer reviewed %q, want %s/pool", reviewed(r), f.nsA)
		}
		data, err := json.Marshal(r.Status)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if a, b := answer(right), answer(wrong); a != b {
		t.Errorf("a viewer tells the real token's first characters from wrong ones:\nright: %s\nwrong: %s", a, b)
	}
}
