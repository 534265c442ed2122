package e2e

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
)

// listTimes lists the OSCs of ns n times and returns how long each took.
func listTimes(t *testing.T, ns string, n int) []time.Duration {
	t.Helper()
	var out []time.Duration
	for range n {
		start := time.Now()
		if _, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Errorf("OSC list of %s: %v", ns, err)
		}
		out = append(out, time.Since(start))
		time.Sleep(100 * time.Millisecond)
	}
	slices.Sort(out)
	return out
}

// A node looping on a failing step floods only its own MD's limits: its
// records beyond them are 429 with Retry-After, its OSC changes with the
// report's state, not with every record, and OSC lists and watches of
// other MDs go on as before.
func TestBootReportFloodDoesNotSlowOtherMDs(t *testing.T) {
	ns, other := syncerNamespace(t), syncerNamespace(t)
	osp := "e2e-reports-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	flood := nodeClient(t, reportingMD(t, ns, osp, "flood", "flood-1-a"))
	createMD(t, syncerMD(other, "calm", osp, "1"))
	payloadSecret(t, other, "calm", "bootstrap", annotated("1", "v1.0.0"))
	if err := report(t, flood, ns, "flood-1-a", step("packages", osmv1alpha1.StepPhaseFailed, 1, "E: boom")); err != nil {
		t.Fatal(err)
	}
	bootReport(t, ns, "flood-1-a", inState(osmv1alpha1.BootStateFailed))

	watchOSCs := func(ns string) watch.Interface {
		list, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).Watch(testContext(t), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		return w
	}
	calmEvents, floodEvents := watchOSCs(other), watchOSCs(ns)
	before := listTimes(t, other, 10)

	var accepted, throttled, failed atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(10 * time.Second)
	for range 6 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				// As a node would: a 429 is an answer, not retried by client-go.
				err := flood.OsmV1alpha1().RESTClient().Post().MaxRetries(0).Namespace(ns).Resource("bootreports").
					Name("flood-1-a").SubResource("step").Body(step("packages", osmv1alpha1.StepPhaseFailed, 1, "E: boom")).
					Do(context.Background()).Error()
				switch {
				case err == nil:
					accepted.Add(1)
				case apierrors.IsTooManyRequests(err):
					if s, ok := apierrors.SuggestsClientDelay(err); !ok || s < 1 {
						t.Errorf("429 without Retry-After: %v", err)
					}
					throttled.Add(1)
				default:
					failed.Add(1)
					t.Errorf("record: %v", err)
				}
			}
		})
	}
	during := listTimes(t, other, 10)
	wg.Wait()
	t.Logf("flood of one machine for 10 s: %d records accepted, %d refused with 429; OSC lists of another namespace: median %s, max %s before, median %s, max %s during",
		accepted.Load(), throttled.Load(), before[5], before[9], during[5], during[9])
	if throttled.Load() == 0 {
		t.Error("no record was throttled")
	}
	if during[9] > 5*time.Second {
		t.Errorf("an OSC list of another namespace took %s during the flood", during[9])
	}
	// Records of an unchanged state are no OSC change; other namespaces see nothing.
	for name, w := range map[string]watch.Interface{other: calmEvents, ns: floodEvents} {
		select {
		case ev := <-w.ResultChan():
			t.Errorf("OSC event in %s during the flood: %s %v", name, ev.Type, ev.Object)
		case <-time.After(2 * time.Second):
		}
	}
}
