package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
)

// rolloutSteps are the steps each machine of a rollout reports, each
// started and succeeded: 8 records, the last one final.
var rolloutSteps = []string{"packages", "container-runtime", "kubelet-binaries", "kubelet-started"}

// rolloutStats is what a rollout's nodes saw.
type rolloutStats struct {
	// Records accepted; answered 429 by osm-apiserver's limits, and by
	// kube-apiserver's own (API Priority and Fairness); other answers or
	// errors sent again.
	records, throttled, throttledByKube, retried int64
	latencies                                    []time.Duration
	elapsed                                      time.Duration
}

func (s *rolloutStats) p(q float64) time.Duration {
	if len(s.latencies) == 0 {
		return 0
	}
	slices.Sort(s.latencies)
	return s.latencies[min(len(s.latencies)-1, int(float64(len(s.latencies))*q))]
}

// rolloutMachine is the name of machine i of a rollout of md.
func rolloutMachine(md string, i int) string { return fmt.Sprintf("%s-1-%04d", md, i) }

// rollout has n machines of MD md of ns post their records as osm-report
// does: each starts within spread, posts a record every interval, and sends
// a record again after a 429 (after its Retry-After) or a 5xx or network
// error (after a second) until it is taken.
func rollout(t *testing.T, client osmclient.Interface, ns, md string, n int, spread, interval time.Duration) *rolloutStats {
	t.Helper()
	stats := &rolloutStats{}
	var mu sync.Mutex
	var records, throttled, throttledByKube, retried atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		machine := rolloutMachine(md, i)
		wg.Go(func() {
			time.Sleep(time.Duration(rand.Int64N(int64(spread) + 1)))
			for k, name := range rolloutSteps {
				for _, phase := range []osmv1alpha1.StepPhase{osmv1alpha1.StepPhaseStarted, osmv1alpha1.StepPhaseSucceeded} {
					s := step(name, phase, 0, "")
					if phase == osmv1alpha1.StepPhaseSucceeded {
						// A duration far shorter than interval: a step whose
						// start was lost would start that little before its end.
						s.Spec.Duration = &metav1.Duration{Duration: 10 * time.Millisecond}
						s.Spec.Final = k == len(rolloutSteps)-1
					}
					for attempt := 0; ; attempt++ {
						sent := time.Now()
						// As osm-report: a 429 is an answer, not retried by client-go.
						err := client.OsmV1alpha1().RESTClient().Post().MaxRetries(0).Namespace(ns).Resource("bootreports").
							Name(machine).SubResource("step").Body(s).Do(context.Background()).Error()
						if err == nil {
							mu.Lock()
							stats.latencies = append(stats.latencies, time.Since(sent))
							mu.Unlock()
							records.Add(1)
							break
						}
						if attempt > 600 {
							t.Errorf("machine %s: %s %s not taken after %d tries: %v", machine, phase, name, attempt, err)
							return
						}
						if apierrors.IsTooManyRequests(err) {
							if strings.Contains(err.Error(), "too many step records") {
								throttled.Add(1)
							} else {
								throttledByKube.Add(1)
							}
							wait, _ := apierrors.SuggestsClientDelay(err)
							time.Sleep(time.Duration(max(wait, 1)) * time.Second)
							continue
						}
						// The informers are moments behind the Machine; the
						// server's load; kube-apiserver's.
						retried.Add(1)
						if apierrors.IsForbidden(err) && !strings.Contains(err.Error(), "is not known") && !strings.Contains(err.Error(), "is none") {
							t.Errorf("machine %s: %v", machine, err)
							return
						}
						time.Sleep(time.Second)
					}
					time.Sleep(interval/2 + time.Duration(rand.Int64N(int64(interval)+1)))
				}
			}
		})
	}
	wg.Wait()
	stats.elapsed = time.Since(start)
	stats.records, stats.throttled, stats.throttledByKube, stats.retried = records.Load(), throttled.Load(), throttledByKube.Load(), retried.Load()
	return stats
}

// checkRollout compares every report of the rollout with what its machine
// sent, and returns how many records are missing from them.
func checkRollout(t *testing.T, ns, md string, n int) (missing int) {
	t.Helper()
	list, err := env.osm.OsmV1alpha1().BootReports(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reports := map[string]*osmv1alpha1.BootReport{}
	for i := range list.Items {
		reports[list.Items[i].Name] = &list.Items[i]
	}
	for i := range n {
		machine := rolloutMachine(md, i)
		r := reports[machine]
		if r == nil {
			missing += 2 * len(rolloutSteps)
			t.Errorf("machine %s has no report", machine)
			continue
		}
		var problems []string
		if r.Status.State != osmv1alpha1.BootStateSucceeded || r.Status.Reason != "" || r.Status.Boots != 1 {
			problems = append(problems, fmt.Sprintf("state %s, reason %q, %d boots", r.Status.State, r.Status.Reason, r.Status.Boots))
		}
		for k, name := range rolloutSteps {
			if k >= len(r.Status.Steps) || r.Status.Steps[k].Name != name {
				missing += 2
				problems = append(problems, "step "+name+" missing or out of order")
				continue
			}
			s := r.Status.Steps[k]
			if s.Phase != osmv1alpha1.StepPhaseSucceeded || s.Attempts != 1 || s.FinishTime == nil {
				missing++
				problems = append(problems, fmt.Sprintf("step %s: %s after %d attempts", name, s.Phase, s.Attempts))
				continue
			}
			// Its start is the Started record's arrival, not its end less 10 ms.
			if s.StartTime == nil || s.FinishTime.Sub(s.StartTime.Time) < 500*time.Millisecond {
				missing++
				problems = append(problems, "step "+name+": its Started record is missing")
			}
		}
		if len(problems) > 0 {
			t.Errorf("report of %s: %s", machine, strings.Join(problems, "; "))
		}
	}
	return missing
}

// A rollout of hundreds of machines of one MD loses no record: every
// report has every step its machine sent, in order, and ends Succeeded.
// OSM_E2E_ROLLOUT_MACHINES (default 300) sets the machines; `make
// bench-reports N=1000` runs it so (docs/benchmarks.md), and with
// OSM_E2E_ROLLOUT_FLOWCONTROL=1 (FLOWCONTROL=1) the flowcontrol component
// is applied first. Time is compressed
// tenfold: a boot's records come 3 s apart (±50 %), not 30 s, and the
// machines start within 12 s, not two minutes.
func TestBootReportRolloutLosesNoRecord(t *testing.T) {
	n := 300
	if v := os.Getenv("OSM_E2E_ROLLOUT_MACHINES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("OSM_E2E_ROLLOUT_MACHINES=%q: not a number of machines", v)
		}
	}
	flowControl := os.Getenv("OSM_E2E_ROLLOUT_FLOWCONTROL") == "1"
	if flowControl {
		applyFlowControlComponent(t)
	}
	ns := syncerNamespace(t)
	osp := "e2e-reports-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	md := syncerMD(ns, "pool", osp, "1")
	md.Spec.Replicas = ptr.To(int32(n))
	machines := make([]string, n)
	for i := range machines {
		machines[i] = rolloutMachine("pool", i)
	}
	created := time.Now()
	client := nodeClient(t, reportingMDOf(t, md, machines...))
	t.Logf("%d machines created in %s", n, time.Since(created).Round(time.Millisecond))

	stats := rollout(t, client, ns, "pool", n, 12*time.Second, 3*time.Second)
	missing := checkRollout(t, ns, "pool", n)
	t.Logf("rollout (components/flowcontrol: %t) of %d machines of one MD, %d records each: %d records in %s (%.1f records/s), 429 and sent again: %d by osm-apiserver's limits, %d by kube-apiserver's; %d other retries, %d dropped; latency of a taken record p50 %s, p99 %s, max %s",
		flowControl, n, 2*len(rolloutSteps), stats.records, stats.elapsed.Round(time.Millisecond), float64(stats.records)/stats.elapsed.Seconds(),
		stats.throttled, stats.throttledByKube, stats.retried, missing, stats.p(0.5).Round(time.Millisecond), stats.p(0.99).Round(time.Millisecond), stats.p(1).Round(time.Millisecond))
	if want := int64(n * 2 * len(rolloutSteps)); stats.records != want {
		t.Errorf("%d records taken, want %d", stats.records, want)
	}
}
