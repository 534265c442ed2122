package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/pkg/server"
)

// reportsReplica is an in-process osm-apiserver whose bootreports the test
// reads directly, as a client behind a Service reaches one replica or another.
type reportsReplica struct {
	*syncerReplica
	client osmclient.Interface
}

func startReportsReplica(t *testing.T, id string) *reportsReplica {
	t.Helper()
	var loopback *rest.Config
	r := startSyncer(t, id, func(c *server.Config) { loopback = rest.CopyConfig(c.Generic.LoopbackClientConfig) })
	return &reportsReplica{syncerReplica: r, client: osmclient.NewForConfigOrDie(loopback)}
}

// reports lists the reports of ns on r: names with resourceVersions and states.
func (r *reportsReplica) reports(ns string) ([]string, string, error) {
	list, err := r.client.OsmV1alpha1().BootReports(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, "", err
	}
	var out []string
	for _, b := range list.Items {
		out = append(out, fmt.Sprintf("%s@%s:%s/%d", b.Name, b.ResourceVersion, b.Status.State, len(b.Status.Steps)))
	}
	return out, list.ResourceVersion, nil
}

// nextReport waits for an event of machine's report on w.
func nextReport(t *testing.T, w watch.Interface, machine string, ok func(*osmv1alpha1.BootReport) bool) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, open := <-w.ResultChan():
			if !open {
				t.Fatalf("watch closed before the report of %s", machine)
			}
			if r, isReport := ev.Object.(*osmv1alpha1.BootReport); isReport && r.Name == machine && ok(r) {
				return
			}
		case <-timeout:
			t.Fatalf("no event of the report of %s", machine)
		}
	}
}

// Reports are stored in the cluster and read through: two replicas serve
// the same objects with the same resourceVersions, a list on one and a
// watch on the other work together, and a restarted replica serves them
// as before, and resumes a watch from before its restart.
func TestBootReportsAreTheSameOnEveryReplicaAndAfterRestarts(t *testing.T) {
	ns := syncerNamespace(t)
	osp := "e2e-reports-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	node := nodeClient(t, reportingMD(t, ns, osp, "delta", "delta-1-a", "delta-1-b"))
	a := startReportsReplica(t, "reports-a")
	b := startReportsReplica(t, "reports-b")
	for _, m := range []string{"delta-1-a", "delta-1-b"} {
		if err := report(t, node, ns, m, step("packages", osmv1alpha1.StepPhaseStarted, 0, "")); err != nil {
			t.Fatal(err)
		}
	}
	same := func() (string, error) {
		ra, rv, err := a.reports(ns)
		if err != nil {
			return "", err
		}
		rb, _, err := b.reports(ns)
		if err != nil {
			return "", err
		}
		if len(ra) != 2 || !slices.Equal(ra, rb) {
			return "", fmt.Errorf("replica a serves %v, b %v", ra, rb)
		}
		return rv, nil
	}
	var listed string
	eventually(t, time.Minute, func() (err error) { listed, err = same(); return err })

	// Listed on a, watched on b: the next step arrives.
	w, err := b.client.OsmV1alpha1().BootReports(ns).Watch(testContext(t), metav1.ListOptions{ResourceVersion: listed})
	if err != nil {
		t.Fatalf("watch on b from a's list: %v", err)
	}
	defer w.Stop()
	if err := report(t, node, ns, "delta-1-a", step("packages", osmv1alpha1.StepPhaseSucceeded, 0, "")); err != nil {
		t.Fatal(err)
	}
	nextReport(t, w, "delta-1-a", func(r *osmv1alpha1.BootReport) bool { return r.Status.Steps[0].Phase == osmv1alpha1.StepPhaseSucceeded })
	before, err := same()
	if err != nil {
		t.Fatal(err)
	}

	// a restarts; a step is reported meanwhile.
	a.stop()
	if err := report(t, node, ns, "delta-1-b", step("packages", osmv1alpha1.StepPhaseFailed, 2, "E: boom")); err != nil {
		t.Fatal(err)
	}
	a = startReportsReplica(t, "reports-a")
	eventually(t, time.Minute, func() error { _, err := same(); return err })
	// The restarted replica resumes a watch from before its restart.
	w2, err := a.client.OsmV1alpha1().BootReports(ns).Watch(testContext(t), metav1.ListOptions{ResourceVersion: before})
	if err != nil {
		t.Fatalf("watch on the restarted replica from before its restart: %v", err)
	}
	defer w2.Stop()
	nextReport(t, w2, "delta-1-b", func(r *osmv1alpha1.BootReport) bool { return r.Status.State == osmv1alpha1.BootStateFailed })
}
