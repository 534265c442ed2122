package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
)

// Issue 27: reviews cannot starve joins. A review flood is floodReviewers
// goroutines posting heavy ProfileReviews in a loop; joins and LISTs of all
// OSCs are timed without it, then during it.
const (
	floodReviewers = 50
	// floodMDs are the MDs each review renders (besides the joining one).
	floodMDs = 4
	// floodMaxReviews bounds the reviews of one reviewer in one flood.
	floodMaxReviews = 500
)

// heavyOverlay is a candidate for osp-ubuntu in ns whose template does a
// lot of work within the previews' 250 ms budget: 3,000 loop iterations,
// each hashing a 1 KiB string, with a small output (so that the work is
// the render's, not the diff's).
func heavyOverlay(t testing.TB, ns string) *overlaysv1alpha1.OperatingSystemProfileOverlay {
	return newOverlay(t, ns, "flood", `  profiles: [`+joinProfile+`]
  provisioningConfig:
    files:
      - path: /etc/flood
        content: {inline: {data: "{{ range $i := until 3000 }}{{ $_ := repeat 1024 \"x\" | sha256sum }}{{ end }}flood\n"}}
`)
}

// floodFixture is a namespace with MD pool, whose machines join, and
// floodMDs more MDs on the same profile, which the flood's reviews render.
type floodFixture struct {
	ns    string
	ms    *clusterv1alpha1.MachineSet
	token string
	next  int // the next machine's number
}

func newFloodFixture(t testing.TB) *floodFixture {
	t.Helper()
	f := &floodFixture{ns: createNamespace(t, fmt.Sprintf("flood-%d", time.Now().UnixNano()%1_000_000_000))}
	f.ms = joinMD(t, f.ns, "pool")
	for i := range floodMDs {
		joinMD(t, f.ns, fmt.Sprintf("heavy-%d", i))
	}
	f.token = userDataToken(t, f.ns, "pool")
	return f
}

// machines creates n fresh machines of pool and waits until osm-apiserver
// knows the last one (a join of a machine it has not seen yet is refused).
func (f *floodFixture) machines(t testing.TB, n int) []string {
	t.Helper()
	var names []string
	for range n {
		name := fmt.Sprintf("%s-m%03d", f.ms.Name, f.next)
		f.next++
		createMachine(t, f.ms, name)
		names = append(names, name)
	}
	// The machines' informer: give it a moment, without joining any of them.
	time.Sleep(2 * time.Second)
	return names
}

// joinPause spaces the joins (and LISTs), as machines boot apart: the flood
// then lasts long enough to matter.
const joinPause = 200 * time.Millisecond

// joins joins each machine once, one after the other, joinPause apart, and
// returns how long each MachineJoin took; bounded by deadline.
func (f *floodFixture) joins(t testing.TB, machines []string, deadline time.Time) []time.Duration {
	t.Helper()
	var took []time.Duration
	for _, m := range machines {
		if time.Now().After(deadline) {
			break
		}
		start := time.Now()
		answer, err := joinAs(t, f.token, f.ns, m, "boot-"+m)
		if err != nil {
			t.Fatalf("MachineJoin of %s: %v", m, err)
		}
		took = append(took, time.Since(start))
		if answer.Status.Kubeconfig == nil {
			t.Fatalf("MachineJoin of %s: no kubeconfig in the answer", m)
		}
		time.Sleep(joinPause)
	}
	return took
}

// listAll LISTs all OSCs n times, and returns how long each took.
func listAll(t testing.TB, n int, deadline time.Time) []time.Duration {
	t.Helper()
	var took []time.Duration
	for range n {
		if time.Now().After(deadline) {
			break
		}
		start := time.Now()
		if _, err := env.osm.OsmV1alpha1().OperatingSystemConfigs("").List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatalf("LIST of all OSCs: %v", err)
		}
		took = append(took, time.Since(start))
		time.Sleep(joinPause)
	}
	return took
}

// floodStats counts a flood's reviews.
type floodStats struct {
	ok, failed atomic.Int64 // reviews answered; refused or timed out
	mdsFailed  atomic.Int64 // MDs whose candidate failed to render (over budget)
	sample     atomic.Value // one of the MDs' errors, a string
}

// flood starts floodReviewers goroutines posting reviews of candidate in a
// loop, each at most floodMaxReviews times, until the returned stop is
// called or ctx ends; it returns once every reviewer has posted its first
// review (or after 30 s). stop waits for the reviewers.
func flood(t testing.TB, ctx context.Context, candidate *overlaysv1alpha1.OperatingSystemProfileOverlay) (stats *floodStats, stop func()) {
	t.Helper()
	// A client of their own, not rate-limited, so that the flood does not
	// queue the LISTs' client-side.
	cfg := rest.CopyConfig(env.config)
	cfg.QPS, cfg.Burst = -1, 0
	c, err := osmclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	stats = &floodStats{}
	var wg, started sync.WaitGroup
	started.Add(floodReviewers)
	for range floodReviewers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for range floodMaxReviews {
				if ctx.Err() != nil {
					break
				}
				r, err := c.OsmV1alpha1().ProfileReviews().Create(ctx, &osmv1alpha1.ProfileReview{Spec: osmv1alpha1.ProfileReviewSpec{Overlay: candidate}}, metav1.CreateOptions{})
				switch {
				case err != nil && ctx.Err() != nil:
					// Stopped: not the server's refusal.
				case err != nil:
					stats.failed.Add(1)
				default:
					stats.ok.Add(1)
					stats.mdsFailed.Add(int64(r.Status.Failed))
					for _, md := range r.Status.MachineDeployments {
						if md.Error != "" {
							stats.sample.CompareAndSwap(nil, md.Error)
						}
					}
				}
				if first {
					started.Done()
					first = false
				}
			}
			if first {
				started.Done()
			}
		}()
	}
	waited := make(chan struct{})
	go func() { started.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(30 * time.Second):
	}
	return stats, func() { cancel(); wg.Wait() }
}

// previewRenders is osm-apiserver's count of ProfileReview renders by
// result (osm_apiserver_review_renders_total).
func previewRenders(t testing.TB) map[string]float64 {
	t.Helper()
	code, body := get(t, osmHTTPClient(t, true), "/metrics")
	if code != 200 {
		t.Fatalf("GET /metrics: %d", code)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(line, `osm_apiserver_review_renders_total{result="`)
		if !ok {
			continue
		}
		result, value, ok := strings.Cut(rest, `"} `)
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			t.Fatalf("/metrics: %q: %v", line, err)
		}
		out[result] = n
	}
	return out
}

// percentile is the p-th percentile (0 < p <= 1) of d, nearest rank.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// floodRun is one quiet and one flooded measurement.
type floodRun struct {
	quietJoins, floodJoins []time.Duration
	quietLists, floodLists []time.Duration
	reviews, failedReviews int64
	failedMDs              int64
	floodTook              time.Duration
	// renders are the preview renders of the flood, by result.
	renders map[string]float64
}

// measureFlood times joins joins and lists LISTs quiet, then under a flood,
// each phase bounded by phase.
func measureFlood(t testing.TB, f *floodFixture, joins, lists int, phase time.Duration) floodRun {
	t.Helper()
	var run floodRun
	candidate := heavyOverlay(t, f.ns)
	quiet, flooded := f.machines(t, joins), f.machines(t, joins)
	// Warm: the pool's render and a first LIST.
	listAll(t, 1, time.Now().Add(phase))

	deadline := time.Now().Add(phase)
	run.quietJoins = f.joins(t, quiet, deadline)
	run.quietLists = listAll(t, lists, deadline)

	ctx, cancel := context.WithTimeout(context.Background(), phase+30*time.Second)
	defer cancel()
	before := previewRenders(t)
	start := time.Now()
	stats, stop := flood(t, ctx, candidate)
	deadline = time.Now().Add(phase)
	run.floodJoins = f.joins(t, flooded, deadline)
	run.floodLists = listAll(t, lists, deadline)
	stop()
	run.floodTook = time.Since(start)
	run.reviews, run.failedReviews, run.failedMDs = stats.ok.Load(), stats.failed.Load(), stats.mdsFailed.Load()
	run.renders = previewRenders(t)
	if e, ok := stats.sample.Load().(string); ok {
		t.Logf("a review's error: %s", e)
	}
	for result, n := range before {
		run.renders[result] -= n
	}
	t.Logf("joins p50/p99: quiet %.0f/%.0f ms (%d), flood %.0f/%.0f ms (%d); LIST all OSCs p50/p99: quiet %.0f/%.0f ms, flood %.0f/%.0f ms; "+
		"%d reviews answered (%d MDs over budget or failed), %d refused, in %s; preview renders %v",
		ms(percentile(run.quietJoins, .5)), ms(percentile(run.quietJoins, .99)), len(run.quietJoins),
		ms(percentile(run.floodJoins, .5)), ms(percentile(run.floodJoins, .99)), len(run.floodJoins),
		ms(percentile(run.quietLists, .5)), ms(percentile(run.quietLists, .99)),
		ms(percentile(run.floodLists, .5)), ms(percentile(run.floodLists, .99)),
		run.reviews, run.failedMDs, run.failedReviews, run.floodTook.Round(time.Millisecond), run.renders)
	return run
}

// floodSlack is what the flooded joins' median may take beyond twice the
// quiet one's: a loaded 2-core machine's noise.
const floodSlack = 200 * time.Millisecond

// TestReviewFloodDoesNotStarveJoins is issue 27's acceptance: with
// floodReviewers clients posting heavy ProfileReviews, the median
// MachineJoin takes at most twice the quiet one's, plus floodSlack.
func TestReviewFloodDoesNotStarveJoins(t *testing.T) {
	f := newFloodFixture(t)
	run := measureFlood(t, f, 20, 5, 25*time.Second)
	if len(run.quietJoins) < 10 || len(run.floodJoins) < 10 {
		t.Fatalf("%d quiet and %d flooded joins within the bound, want at least 10 each", len(run.quietJoins), len(run.floodJoins))
	}
	if rendered := run.renders["success"] + run.renders["error"]; rendered < 10 {
		t.Fatalf("%.0f preview renders during the flood, want at least 10: it loaded nothing", rendered)
	}
	quiet, flooded := percentile(run.quietJoins, .5), percentile(run.floodJoins, .5)
	if limit := 2*quiet + floodSlack; flooded > limit {
		t.Errorf("under %d concurrent reviews the median MachineJoin took %s, more than 2× the quiet %s + %s", floodReviewers, flooded.Round(time.Millisecond), quiet.Round(time.Millisecond), floodSlack)
	}
}

// BenchmarkReviewFlood times MachineJoins (each of a fresh machine) and
// LISTs of all OSCs quiet, then while floodReviewers clients post heavy
// ProfileReviews (heavyOverlay, over 1+floodMDs MDs) in a loop. It asserts
// nothing on timing: TestReviewFloodDoesNotStarveJoins does.
//
//	go test -count=1 -run '^$' -bench ReviewFlood -benchtime 1x ./test/e2e
func BenchmarkReviewFlood(b *testing.B) {
	f := newFloodFixture(b)
	var run floodRun
	for b.Loop() {
		run = measureFlood(b, f, 50, 10, 60*time.Second)
	}
	qp50, qp99 := percentile(run.quietJoins, .5), percentile(run.quietJoins, .99)
	fp50, fp99 := percentile(run.floodJoins, .5), percentile(run.floodJoins, .99)
	b.ReportMetric(ms(qp50), "join-p50-quiet-ms")
	b.ReportMetric(ms(qp99), "join-p99-quiet-ms")
	b.ReportMetric(ms(fp50), "join-p50-flood-ms")
	b.ReportMetric(ms(fp99), "join-p99-flood-ms")
	if qp50 > 0 && qp99 > 0 {
		b.ReportMetric(float64(fp50)/float64(qp50), "join-p50-ratio")
		b.ReportMetric(float64(fp99)/float64(qp99), "join-p99-ratio")
	}
	b.ReportMetric(ms(percentile(run.quietLists, .5)), "list-p50-quiet-ms")
	b.ReportMetric(ms(percentile(run.quietLists, .99)), "list-p99-quiet-ms")
	b.ReportMetric(ms(percentile(run.floodLists, .5)), "list-p50-flood-ms")
	b.ReportMetric(ms(percentile(run.floodLists, .99)), "list-p99-flood-ms")
	b.ReportMetric(float64(run.reviews)/run.floodTook.Seconds(), "reviews/s")
	b.ReportMetric((run.renders["success"]+run.renders["error"])/run.floodTook.Seconds(), "preview-renders/s")
	b.ReportMetric(float64(run.failedMDs), "review-mds-failed")
}
