package changefeed

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
)

func TestPositionString(t *testing.T) {
	p := Position{Revs: []uint64{12, 0, 7}, Facts: "a1b2"}
	if p.String() != "12.0.7.a1b2" {
		t.Fatalf("String() = %q", p.String())
	}
	got, err := Parse(p.String())
	if err != nil || !got.Equal(p) {
		t.Fatalf("Parse(%q) = %v, %v", p.String(), got, err)
	}
	// A resourceVersion of an earlier osm-apiserver: a position of no streams.
	if got, err := Parse("588"); err != nil || len(got.Revs) != 0 {
		t.Fatalf("Parse(588) = %v, %v", got, err)
	}
	for _, bad := range []string{"", "x", "1.x.a", "1.2."} {
		if _, err := Parse(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q): %v, want malformed", bad, err)
		}
	}
}

// A reader has all of a change (a profile used by three MDs) only after
// its last event: resuming after the first one replays all three.
func TestAdvanceWithinOneChange(t *testing.T) {
	p := Position{Revs: []uint64{10}}
	p.Advance(Event{Stream: 0, Rev: 15})
	if p.Revs[0] != 14 {
		t.Fatalf("after the first event of change 15: %d, want 14", p.Revs[0])
	}
	p.Advance(Event{Stream: 0, Rev: 15, Last: true})
	if p.Revs[0] != 15 {
		t.Fatalf("after the last event of change 15: %d", p.Revs[0])
	}
	p.Advance(Event{Stream: 0, Rev: 20, Progress: true})
	p.Advance(Event{Stream: 0, Rev: 18, Last: true})
	if p.Revs[0] != 20 {
		t.Fatalf("positions only advance: %d", p.Revs[0])
	}
}

// Two replicas over one cluster: each position is the cluster's revision, so
// a watch resumes on the other replica, and on one started (or restarted)
// later; a position from before a replica's start, which it cannot prove
// complete, is 410 Gone; one the cluster never issued is too large.
func TestResumeAcrossReplicas(t *testing.T) {
	c := newFakeCluster()
	c.apply(watch.Added, "a", nil)
	c.apply(watch.Added, "b", nil)
	a := startReplica(t, c, 100)
	listed := a.waitFor(t, c.current())

	c.apply(watch.Modified, "a", func(md *clusterv1alpha1.MachineDeployment) { md.Labels = map[string]string{"pool": "x"} })
	c.other()
	deleted := c.apply(watch.Deleted, "b", nil)
	// b starts after the deletion: it never saw it.
	b := startReplica(t, c, 100)
	a.waitFor(t, deleted)

	if got := a.events(t, listed, 2); !slices.Equal(got, []string{"MODIFIED a", "DELETED b"}) {
		t.Errorf("resumed on the replica that listed: %v", got)
	}
	var tooOld *TooOldError
	if _, err := b.feed.Subscribe(context.Background(), listed); !errors.As(err, &tooOld) {
		t.Errorf("a position from before the replica listed: %v, want too old", err)
	}

	atDeletion := a.waitFor(t, deleted)
	added := c.apply(watch.Added, "d", nil)
	b.waitFor(t, added)
	if got := b.events(t, atDeletion, 1); !slices.Equal(got, []string{"ADDED d"}) {
		t.Errorf("resumed on the other replica: %v", got)
	}

	// Changes of other resources move no informer; a bookmark does.
	quiet := c.other()
	c.bookmark()
	pa, pb := a.waitFor(t, quiet), b.waitFor(t, quiet)
	if !pa.Equal(pb) {
		t.Errorf("after a bookmark the replicas are at %s and %s", pa, pb)
	}

	// A revision this replica has not seen but the cluster has issued is a
	// position (another replica's informer is ahead); one beyond is not.
	ahead := Position{Revs: []uint64{c.other()}, Facts: pb.Facts}
	if sub, err := b.feed.Subscribe(context.Background(), ahead); err != nil {
		t.Errorf("a position the cluster issued: %v", err)
	} else {
		sub.Close()
	}
	future := Position{Revs: []uint64{c.current() + 1000}, Facts: pb.Facts}
	var tooLarge *TooLargeError
	if _, err := b.feed.Subscribe(context.Background(), future); !errors.As(err, &tooLarge) {
		t.Errorf("a future position: %v, want too large", err)
	}
	if _, err := b.feed.Subscribe(context.Background(), Position{Facts: "588"}); !errors.As(err, &tooOld) {
		t.Errorf("an old-style resourceVersion: %v, want too old", err)
	}
}

// When an informer lists again (its watch was too old, e.g. after a
// kube-apiserver restart), it learns of deletions without their revision:
// every subscription ends, positions before the list are too old, and the
// position continues from the list.
func TestRelist(t *testing.T) {
	for _, watchList := range []bool{false, true} {
		t.Run(map[bool]string{false: "list", true: "watch-list"}[watchList], func(t *testing.T) {
			c := newFakeCluster()
			c.watchList = watchList
			c.apply(watch.Added, "a", nil)
			c.apply(watch.Added, "b", nil)
			r := startReplica(t, c, 100)
			before := r.waitFor(t, c.current())
			sub, err := r.feed.Subscribe(context.Background(), before)
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()

			c.compact()
			c.apply(watch.Deleted, "a", nil) // while the informer is not watching
			changed := c.apply(watch.Modified, "b", func(md *clusterv1alpha1.MachineDeployment) { md.Labels = map[string]string{"pool": "y"} })
			after := r.waitFor(t, changed)
			if _, err := r.lister.Get("ns", "a"); err == nil {
				t.Error("the informer still has the deleted MD")
			}
			for range sub.C() {
			} // ends: the client resumes, and lists
			var tooOld *TooOldError
			if _, err := r.feed.Subscribe(context.Background(), before); !errors.As(err, &tooOld) {
				t.Errorf("a position from before the list: %v, want too old", err)
			}
			c.apply(watch.Added, "e", nil)
			if got := r.events(t, after, 1); !slices.Equal(got, []string{"ADDED e"}) {
				t.Errorf("from the list on: %v", got)
			}
		})
	}
}

func TestHistoryLimit(t *testing.T) {
	c := newFakeCluster()
	r := startReplica(t, c, 2)
	start := r.waitFor(t, c.current())
	for _, pool := range []string{"x", "y", "z"} {
		c.apply(watch.Modified, "a", func(md *clusterv1alpha1.MachineDeployment) { md.Labels = map[string]string{"pool": pool} })
	}
	r.waitFor(t, c.current())
	var tooOld *TooOldError
	if _, err := r.feed.Subscribe(context.Background(), start); !errors.As(err, &tooOld) {
		t.Fatalf("a position before the kept history: %v, want too old", err)
	}
}

// New facts (a rotated CA) change every output: live subscribers get an
// event per MD and then the new facts; a position of the old facts is too
// old, because this replica has nothing to replay them from.
func TestFactsChange(t *testing.T) {
	facts := "f1"
	f := New(10, func() string { return facts })
	p, err := f.Position(context.Background())
	if err != nil || p.Facts != "f1" {
		t.Fatalf("position %v, %v", p, err)
	}
	sub, err := f.Subscribe(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	facts = "f2"
	md := &clusterv1alpha1.MachineDeployment{}
	f.PublishFacts("f2", []*clusterv1alpha1.MachineDeployment{md, md})
	for range 3 {
		ev := <-sub.C()
		if !p.New(ev) {
			t.Fatalf("event %+v is not new to a reader of the old facts", ev)
		}
		p.Advance(ev)
	}
	if p.Facts != "f2" {
		t.Fatalf("after the change the reader is at %s", p)
	}
	var tooOld *TooOldError
	if _, err := f.Subscribe(context.Background(), Position{Facts: "f1"}); !errors.As(err, &tooOld) {
		t.Fatalf("a position of the old facts: %v, want too old", err)
	}
}

// Until the facts are known (the function says ""), there is no position: a
// replica whose facts informers are slower than its streams must not issue
// positions that the other replicas, which have facts, refuse. Wake ends the
// wait once the facts are known to be missing.
func TestNoPositionWithoutFacts(t *testing.T) {
	var mu sync.Mutex
	facts := ""
	f := New(10, func() string { mu.Lock(); defer mu.Unlock(); return facts })
	var notReady *NotReadyError
	if _, err := f.Subscribe(context.Background(), Position{Facts: "0"}); !errors.As(err, &notReady) || !slices.Contains(notReady.Waiting, "cluster facts") {
		t.Fatalf("subscribe without facts: %v, want not ready, waiting for the cluster facts", err)
	}
	if f.HasSynced() {
		t.Fatal("synced without facts")
	}
	got := make(chan Position, 1)
	go func() {
		p, err := f.Position(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- p
	}()
	mu.Lock()
	facts = "0"
	mu.Unlock()
	f.Wake()
	if p := <-got; p.Facts != "0" {
		t.Fatalf("position %s after the facts were found missing", p)
	}
	if !f.HasSynced() {
		t.Fatal("not synced once the facts are settled")
	}
}

// With --worker-cluster-kubeconfig profiles come from one etcd and MDs from
// another: each stream is compared only with itself, so a revision far
// beyond one cluster's is still refused although the other has issued it.
func TestIndependentRevisionSpaces(t *testing.T) {
	management, worker := newFakeCluster(), newFakeCluster()
	for range 50 {
		management.other()
	}
	f := New(100, nil)
	clusters := []*fakeCluster{worker, management}
	for i, name := range []string{"worker", "management"} {
		s := f.AddStream(name)
		informer := informers.NewMachineDeployments(s.Wrap(clusters[i]), "kube-system")
		if _, err := informer.AddEventHandler(s.Handler(MachineDeployments())); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		go informer.RunWithContext(ctx)
	}
	r := &replica{feed: f}
	start := r.waitFor(t, 0)
	if start.Revs[0] != worker.current() || start.Revs[1] != management.current() {
		t.Fatalf("position %s, want the revisions of each cluster", start)
	}
	worker.apply(watch.Added, "a", nil)
	management.apply(watch.Added, "b", nil)
	if got := r.events(t, start, 2); len(got) != 2 {
		t.Fatalf("events %v", got)
	}
	ahead := start.Clone()
	ahead.Revs[0] = management.current() // issued by the management cluster only
	var tooLarge *TooLargeError
	if _, err := f.Subscribe(context.Background(), ahead); !errors.As(err, &tooLarge) || tooLarge.Stream != "worker" {
		t.Fatalf("a worker revision only the management cluster reached: %v, want too large", err)
	}
}

// Objects without a readable resourceVersion (fake clientsets in tests)
// still complete a list.
func TestUnreadableRevisions(t *testing.T) {
	f := New(10, nil)
	s := f.AddStream("machinedeployments")
	md := *machinecontrollertest.MD("ns", "a", "osp", nil)
	md.ResourceVersion = ""
	lw := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &clusterv1alpha1.MachineDeploymentList{Items: []clusterv1alpha1.MachineDeployment{md}}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}
	informer := informers.NewMachineDeployments(s.Wrap(unsupportedWatchList{lw}), "kube-system")
	if _, err := informer.AddEventHandler(s.Handler(MachineDeployments())); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go informer.RunWithContext(ctx)
	if _, err := f.Position(ctx); err != nil {
		t.Fatal(err)
	}
}

type unsupportedWatchList struct{ *cache.ListWatch }

func (unsupportedWatchList) IsWatchListSemanticsUnSupported() bool { return true }
