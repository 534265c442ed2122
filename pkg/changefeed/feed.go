// Package changefeed turns changes of the inputs of MachineDeployments'
// rendered outputs — an MD added, changed or deleted, its MachineSets, its
// profile, its tokens, the cluster facts — into the events of the virtual
// resources' watches, and gives those resources their resourceVersions.
//
// A resourceVersion is a Position: per input informer (a Stream), the
// kube-apiserver revision up to which every change has been published, and
// the version of the cluster facts. Nothing in it is local to a replica, so
// a watch resumes on any replica, before or after a restart: it replays the
// changes after the position, or answers 410 Gone when the replica cannot
// prove it has them all (it listed the input after that position), or 504
// "Too large resource version" when the cluster never issued it.
package changefeed

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/watch"
)

// DefaultHistory is how many past events a watch can resume from.
const DefaultHistory = 4096

// subscriptionBuffer bounds the events queued for one watcher. A watcher that
// falls this far behind is closed, like kube-apiserver closes slow watchers;
// its client resumes from its last event.
const subscriptionBuffer = 1024

// positionWait bounds how long a LIST or a new watch waits for a position
// (the informers listing) before it answers 503.
const positionWait = 5 * time.Second

// Event is one change of one MachineDeployment's rendered output, or a mark
// of progress.
type Event struct {
	Type watch.EventType
	// MD is the MachineDeployment after the change; for Deleted, its last known state.
	MD *clusterv1alpha1.MachineDeployment
	// Old is the MachineDeployment before an update of the MD itself, so that a
	// watch with a label selector sees an MD entering or leaving the selection.
	// Nil for other events.
	Old *clusterv1alpha1.MachineDeployment

	// Stream is the index of the stream whose change this is, -1 for a
	// change of the cluster facts.
	Stream int
	// Rev is the revision of the change in its stream.
	Rev uint64
	// Facts is the version of the new facts, for a change of the facts.
	Facts string
	// Last marks the last event of one input change (a profile change has
	// one event per MD that uses it): a reader has all of the change only
	// after it.
	Last bool
	// Progress marks no change, only that Stream is complete up to Rev.
	Progress bool
	// Machines marks a change of the boot reports of the MD's machines,
	// which only the OperatingSystemConfig's status (its machine summary)
	// reads: resources that do not read them send nothing for it.
	Machines bool
}

// Feed is a bounded log of Events with subscribers, and the current Position.
type Feed struct {
	mu      sync.Mutex
	streams []*Stream
	facts   func() string
	history []Event // ring buffer
	next    int     // index in history of the next event to write
	subs    map[*Subscription]struct{}
	// changed is closed and replaced when a stream's position changes.
	changed chan struct{}
	gen     atomic.Uint64
	version atomic.Pointer[cachedVersion]
	// listed is set once every stream has listed and there are facts.
	listed atomic.Bool
}

type cachedVersion struct {
	gen   uint64
	facts string
	rv    string
}

// New returns a feed that keeps the last history events for resuming
// watches. facts returns the version of the current cluster facts, "" while
// there are none; nil means facts never change.
func New(history int, facts func() string) *Feed {
	if history <= 0 {
		history = DefaultHistory
	}
	if facts == nil {
		facts = func() string { return "0" }
	}
	return &Feed{
		history: make([]Event, 0, history),
		facts:   facts,
		subs:    map[*Subscription]struct{}{},
		changed: make(chan struct{}),
	}
}

// AddStream adds the stream name; add every stream before the feed is used.
func (f *Feed) AddStream(name string) *Stream {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &Stream{feed: f, index: len(f.streams), name: name}
	s.readAt.Store(time.Time{})
	f.streams = append(f.streams, s)
	return s
}

// positionChangedLocked wakes those waiting for a position.
func (f *Feed) positionChangedLocked() {
	f.gen.Add(1)
	close(f.changed)
	f.changed = make(chan struct{})
}

// positionLocked returns the current position; waiting names the streams
// without one (listing), and the cluster facts while there are none.
func (f *Feed) positionLocked() (p Position, waiting []string) {
	p = Position{Revs: make([]uint64, len(f.streams)), Facts: f.facts()}
	for i, s := range f.streams {
		if !s.readyLocked() {
			waiting = append(waiting, s.name)
		}
		p.Revs[i] = s.pos
	}
	if p.Facts == "" {
		waiting = append(waiting, "cluster facts")
	}
	return p, waiting
}

// Position returns the current position, waiting (at most a few seconds,
// and not beyond ctx) while an input is being listed.
func (f *Feed) Position(ctx context.Context) (Position, error) {
	var timeout <-chan time.Time // made only when there is something to wait for
	for {
		f.mu.Lock()
		p, waiting := f.positionLocked()
		changed := f.changed
		f.mu.Unlock()
		if len(waiting) == 0 {
			return p, nil
		}
		if timeout == nil {
			t := time.NewTimer(positionWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-changed:
		case <-timeout:
			return Position{}, &NotReadyError{Waiting: waiting}
		case <-ctx.Done():
			return Position{}, &NotReadyError{Waiting: waiting}
		}
	}
}

// WaitListed returns once every stream has listed once and there are
// facts, at once after the first time: before, the informers' caches are
// empty, and a GET would answer 404 for an MD that exists. It waits as
// Position does.
func (f *Feed) WaitListed(ctx context.Context) error {
	if f.listed.Load() {
		return nil
	}
	if _, err := f.Position(ctx); err != nil {
		return err
	}
	f.listed.Store(true)
	return nil
}

// HasSynced reports whether the feed has a position: every stream listed
// and the facts are settled.
func (f *Feed) HasSynced() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, waiting := f.positionLocked()
	return len(waiting) == 0
}

// Version returns the current position as a resourceVersion, without
// waiting, for objects read one at a time: any position a reader can resume
// from will do, and this one is cached.
func (f *Feed) Version() string {
	facts := f.facts()
	gen := f.gen.Load()
	if v := f.version.Load(); v != nil && v.gen == gen && v.facts == facts {
		return v.rv
	}
	f.mu.Lock()
	p, _ := f.positionLocked()
	f.mu.Unlock()
	rv := p.String()
	f.version.Store(&cachedVersion{gen: gen, facts: facts, rv: rv})
	return rv
}

// publishLocked records the events of one change and hands them to every
// subscriber; the last one is marked Last.
func (f *Feed) publishLocked(events []Event) {
	for i := range events {
		events[i].Last = i == len(events)-1
		ev := events[i]
		if ev.Stream >= 0 {
			f.recordLocked(ev)
		}
		f.sendLocked(ev)
	}
}

// recordLocked keeps ev in the history; the event it overwrites raises its
// stream's floor: nobody can resume from before it any more.
func (f *Feed) recordLocked(ev Event) {
	if len(f.history) < cap(f.history) {
		f.history = append(f.history, ev)
	} else {
		old := f.history[f.next]
		if s := f.streams[old.Stream]; old.Rev > s.since {
			s.since = old.Rev
		}
		f.history[f.next] = ev
	}
	f.next = (f.next + 1) % cap(f.history)
}

func (f *Feed) sendLocked(ev Event) {
	for s := range f.subs {
		select {
		case s.ch <- ev:
		default:
			delete(f.subs, s)
			close(s.ch)
		}
	}
}

// progressLocked tells subscribers that s is complete up to its position.
func (f *Feed) progressLocked(s *Stream) {
	f.sendLocked(Event{Stream: s.index, Rev: s.pos, Progress: true})
}

// closeSubscriptionsLocked ends every subscription: their clients resume
// from their last event, and are told to list again when that is too old.
func (f *Feed) closeSubscriptionsLocked() {
	for s := range f.subs {
		delete(f.subs, s)
		close(s.ch)
	}
}

// Wake wakes those waiting for a position after the answer of the facts
// function changed without new facts to publish.
func (f *Feed) Wake() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.positionChangedLocked()
}

// PublishFacts records that the cluster facts changed to version facts,
// which every MD's output depends on: one Modified event per MD in mds, then
// the new version.
func (f *Feed) PublishFacts(facts string, mds []*clusterv1alpha1.MachineDeployment) {
	events := make([]Event, 0, len(mds)+1)
	for _, md := range mds {
		events = append(events, Event{Type: watch.Modified, MD: md, Stream: -1, Facts: facts})
	}
	events = append(events, Event{Stream: -1, Facts: facts, Progress: true})
	f.mu.Lock()
	defer f.mu.Unlock()
	f.publishLocked(events)
	f.positionChangedLocked()
}
