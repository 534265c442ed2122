package e2e

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
)

// BenchmarkProfileReview1000 previews an overlay (a CA, a drop-in, a sysctl
// from a template) of the bench OSP over its 1,000 MachineDeployments through
// kube-apiserver: as client-go, and as `kubectl create -f review.yaml -o yaml`.
// The current outputs are warm, the candidate is new each time.
//
//	go test -count=1 -run '^$' -bench ProfileReview1000 -benchtime 5x ./test/e2e
func BenchmarkProfileReview1000(b *testing.B) {
	benchOnce.Do(func() { benchErr = createBenchMDs() })
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	overlay := newOverlay(b, "kube-system", "bench-company", `  profiles: [`+benchOSP+`]
  provisioningConfig:
    files:
      - path: /usr/local/share/ca-certificates/company-ca.crt
        content: {inline: {data: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"}}
      - path: /etc/sysctl.d/95-inotify.conf
        content: {inline: {data: "fs.inotify.max_user_instances = {{ if .MaxPods }}8192{{ else }}1024{{ end }}\n"}}
    dropIns:
      - {unit: osm-setup.service, name: 10-ca.conf, content: "[Service]\nExecStartPre=/usr/sbin/update-ca-certificates\n"}
`)
	ctx := context.Background()
	check := func(b *testing.B, r *osmv1alpha1.ProfileReview) {
		if r.Status.Reviewed < benchMDs || r.Status.Changed < benchMDs {
			b.Fatalf("%d reviewed, %d changed; want %d", r.Status.Reviewed, r.Status.Changed, benchMDs)
		}
	}
	// Warm the render cache: the current outputs.
	if _, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(benchNamespace).List(ctx, metav1.ListOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Run("client-go", func(b *testing.B) {
		for b.Loop() {
			r, err := env.osm.OsmV1alpha1().ProfileReviews().Create(ctx, &osmv1alpha1.ProfileReview{Spec: osmv1alpha1.ProfileReviewSpec{Overlay: overlay}}, metav1.CreateOptions{})
			if err != nil {
				b.Fatal(err)
			}
			check(b, r)
		}
	})
	b.Run("kubectl", func(b *testing.B) {
		path := writeReviewB(b, overlay)
		for b.Loop() {
			out := kubectl(b, "create", "-f", path, "-o", "yaml")
			if n := strings.Count(out, "\n    changed: true\n"); n < benchMDs {
				b.Fatalf("%d MDs changed in the output, want %d", n, benchMDs)
			}
		}
	})
}
