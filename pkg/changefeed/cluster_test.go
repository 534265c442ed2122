package changefeed

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
)

// fakeCluster is a kube-apiserver of MachineDeployments for informers: one
// revision counter, a log of changes a watch resumes from, bookmarks, and
// compaction (a watch from before it is 410 Gone, and informers list again).
type fakeCluster struct {
	// watchList makes informers stream their lists (sendInitialEvents).
	watchList bool
	mu        sync.Mutex
	rev       uint64
	objs      map[string]*clusterv1alpha1.MachineDeployment
	log       []watch.Event
	compacted uint64
	watchers  []*watch.FakeWatcher
}

func newFakeCluster() *fakeCluster {
	return &fakeCluster{rev: 100, objs: map[string]*clusterv1alpha1.MachineDeployment{}}
}

// IsWatchListSemanticsUnSupported: informers list, then watch, unless watchList.
func (c *fakeCluster) IsWatchListSemanticsUnSupported() bool { return !c.watchList }

func (c *fakeCluster) List(metav1.ListOptions) (runtime.Object, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := &clusterv1alpha1.MachineDeploymentList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatUint(c.rev, 10)}}
	for _, md := range c.objs {
		list.Items = append(list.Items, *md.DeepCopy())
	}
	return list, nil
}

func (c *fakeCluster) Watch(o metav1.ListOptions) (watch.Interface, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := watch.NewFakeWithChanSize(len(c.log)+len(c.objs)+100, false)
	c.watchers = append(c.watchers, w)
	if o.SendInitialEvents != nil && *o.SendInitialEvents {
		for _, md := range c.objs {
			w.Add(md.DeepCopy())
		}
		w.Action(watch.Bookmark, &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{
			ResourceVersion: strconv.FormatUint(c.rev, 10),
			Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
		}})
		return w, nil
	}
	from, _ := strconv.ParseUint(o.ResourceVersion, 10, 64)
	if from < c.compacted {
		c.watchers = c.watchers[:len(c.watchers)-1]
		return nil, apierrors.NewResourceExpired("too old resource version")
	}
	for _, ev := range c.log {
		if rv, _ := strconv.ParseUint(ev.Object.(*clusterv1alpha1.MachineDeployment).ResourceVersion, 10, 64); rv > from {
			w.Action(ev.Type, ev.Object.DeepCopyObject())
		}
	}
	return w, nil
}

// apply makes a change at the next revision and returns that revision.
func (c *fakeCluster) apply(typ watch.EventType, name string, mutate func(*clusterv1alpha1.MachineDeployment)) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rev++
	md, ok := c.objs[name]
	if !ok {
		md = machinecontrollertest.MD("ns", name, "osp", nil)
	}
	md = md.DeepCopy()
	if mutate != nil {
		mutate(md)
	}
	md.ResourceVersion = strconv.FormatUint(c.rev, 10)
	if typ == watch.Deleted {
		delete(c.objs, name)
	} else {
		c.objs[name] = md
	}
	ev := watch.Event{Type: typ, Object: md}
	c.log = append(c.log, ev)
	for _, w := range c.watchers {
		if !w.IsStopped() {
			w.Action(typ, md.DeepCopy())
		}
	}
	return c.rev
}

// other advances the revision with a change of some other resource.
func (c *fakeCluster) other() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rev++
	return c.rev
}

// bookmark sends every watch a bookmark of the current revision.
func (c *fakeCluster) bookmark() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.watchers {
		if !w.IsStopped() {
			w.Action(watch.Bookmark, &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.FormatUint(c.rev, 10)}})
		}
	}
	return c.rev
}

// compact forgets the log and ends every watch with 410 Gone, as after a
// kube-apiserver restart: informers list again.
func (c *fakeCluster) compact() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.compacted, c.log = c.rev+1, nil
	for _, w := range c.watchers {
		if !w.IsStopped() {
			w.Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
			w.Stop()
		}
	}
	c.watchers = nil
}

// replica is the change feed of one osm-apiserver replica over a fake
// cluster: one stream, of MachineDeployments.
type replica struct {
	feed   *Feed
	stream *Stream
	lister machines.Lister
}

func startReplica(t *testing.T, c *fakeCluster, history int) *replica {
	t.Helper()
	f := New(history, nil)
	s := f.AddStream("machinedeployments")
	informer := informers.NewMachineDeployments(s.Wrap(c), "kube-system")
	if _, err := informer.AddEventHandler(s.Handler(MachineDeployments())); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go informer.RunWithContext(ctx)
	r := &replica{feed: f, stream: s, lister: machines.NewLister(informer.GetIndexer())}
	r.waitFor(t, c.current())
	return r
}

func (c *fakeCluster) current() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rev
}

// waitFor waits until the replica's position reaches rev.
func (r *replica) waitFor(t *testing.T, rev uint64) Position {
	t.Helper()
	var p Position
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		p, err = r.feed.Position(ctx)
		return err == nil && p.Revs[0] >= rev, nil
	})
	if err != nil {
		t.Fatalf("position %v did not reach %d: %v", p, rev, err)
	}
	return p
}

// events returns the names and types of the replay and the next n events
// of a subscription from p, failing the test unless it succeeds.
func (r *replica) events(t *testing.T, from Position, n int) []string {
	t.Helper()
	sub, err := r.feed.Subscribe(context.Background(), from)
	if err != nil {
		t.Fatalf("subscribe from %s: %v", from, err)
	}
	defer sub.Close()
	var got []string
	for _, ev := range sub.Replay {
		got = append(got, string(ev.Type)+" "+ev.MD.Name)
	}
	timeout := time.After(10 * time.Second)
	for len(got) < n {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				t.Fatalf("subscription closed after %v", got)
			}
			if !ev.Progress {
				got = append(got, string(ev.Type)+" "+ev.MD.Name)
			}
		case <-timeout:
			t.Fatalf("got %v, want %d events", got, n)
		}
	}
	return got
}

var _ cache.ListerWatcher = &fakeCluster{}
