// Package changefeed numbers every change to a MachineDeployment's rendered
// output — an MD added, changed or deleted, or one of its inputs (its profile, a
// token) changed — and fans the changes out to watchers. The sequence numbers
// are the resourceVersions of the virtual resources: an object's version is the
// number of the last change that touched it, a list's is the last number issued.
package changefeed

import (
	"fmt"
	"sync"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/watch"
)

// DefaultHistory is how many past events a watch can resume from.
const DefaultHistory = 4096

// subscriptionBuffer bounds the events queued for one watcher. A watcher that
// falls this far behind is closed, like kube-apiserver closes slow watchers;
// its client lists and watches again.
const subscriptionBuffer = 1024

// Event is one change of one MachineDeployment's rendered output.
type Event struct {
	Seq  uint64
	Type watch.EventType
	// MD is the MachineDeployment after the change; for Deleted, its last known state.
	MD *clusterv1alpha1.MachineDeployment
	// Old is the MachineDeployment before an update of the MD itself, so that a
	// watch with a label selector sees an MD entering or leaving the selection.
	// Nil for other events.
	Old *clusterv1alpha1.MachineDeployment
}

// Feed is an in-memory, bounded log of Events with subscribers.
type Feed struct {
	mu       sync.RWMutex
	seq      uint64
	history  []Event // ring buffer
	next     int     // index in history of the next event to write
	versions map[string]uint64
	subs     map[*Subscription]struct{}
}

// New returns a feed that keeps the last history events for resuming watches.
func New(history int) *Feed {
	if history <= 0 {
		history = DefaultHistory
	}
	return &Feed{
		history:  make([]Event, 0, history),
		versions: map[string]uint64{},
		subs:     map[*Subscription]struct{}{},
	}
}

func key(namespace, name string) string {
	return namespace + "/" + name
}

// Publish records a change of md and hands it to every subscriber.
func (f *Feed) Publish(typ watch.EventType, md *clusterv1alpha1.MachineDeployment) uint64 {
	return f.publish(Event{Type: typ, MD: md})
}

// PublishUpdate records an update of an MD from old to md.
func (f *Feed) PublishUpdate(old, md *clusterv1alpha1.MachineDeployment) uint64 {
	return f.publish(Event{Type: watch.Modified, MD: md, Old: old})
}

func (f *Feed) publish(ev Event) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	ev.Seq = f.seq
	typ, md := ev.Type, ev.MD
	if typ == watch.Deleted {
		delete(f.versions, key(md.Namespace, md.Name))
	} else {
		f.versions[key(md.Namespace, md.Name)] = f.seq
	}
	if len(f.history) < cap(f.history) {
		f.history = append(f.history, ev)
	} else {
		f.history[f.next] = ev
	}
	f.next = (f.next + 1) % cap(f.history)
	for s := range f.subs {
		select {
		case s.ch <- ev:
		default:
			delete(f.subs, s)
			close(s.ch)
		}
	}
	return f.seq
}

// Version returns the number of the last change of the named MachineDeployment,
// or the feed's current number if it has none (not yet seen by the informer).
func (f *Feed) Version(namespace, name string) uint64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if v, ok := f.versions[key(namespace, name)]; ok {
		return v
	}
	return f.seq
}

// Current returns the number of the last change.
func (f *Feed) Current() uint64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.seq
}

// TooOldError says a watch asked to resume from a change no longer kept.
type TooOldError struct {
	Requested, Oldest uint64
}

func (e *TooOldError) Error() string {
	return fmt.Sprintf("resource version %d is too old: the oldest kept is %d", e.Requested, e.Oldest)
}

// Subscription receives the events after the one it started from.
type Subscription struct {
	feed *Feed
	// Replay holds the kept events after the requested one, oldest first;
	// consume it before C.
	Replay []Event
	ch     chan Event
}

// C delivers new events. It is closed when the subscriber fell too far behind
// or after Close.
func (s *Subscription) C() <-chan Event {
	return s.ch
}

// Close stops delivery. Safe to call more than once.
func (s *Subscription) Close() {
	f := s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.subs[s]; ok {
		delete(f.subs, s)
		close(s.ch)
	}
}

// Subscribe returns a subscription to the events after from, and the number of
// the last event already issued at that moment. from == 0 means "from now".
func (f *Feed) Subscribe(from uint64) (*Subscription, uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &Subscription{feed: f, ch: make(chan Event, subscriptionBuffer)}
	if from != 0 && from < f.seq {
		oldest := f.seq - uint64(len(f.history)) + 1
		if from+1 < oldest {
			return nil, 0, &TooOldError{Requested: from, Oldest: oldest}
		}
		s.Replay = make([]Event, 0, f.seq-from)
		for i := range len(f.history) {
			ev := f.history[(f.next+i)%len(f.history)]
			if len(f.history) < cap(f.history) {
				ev = f.history[i]
			}
			if ev.Seq > from {
				s.Replay = append(s.Replay, ev)
			}
		}
	}
	f.subs[s] = struct{}{}
	return s, f.seq, nil
}
