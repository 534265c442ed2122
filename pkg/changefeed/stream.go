package changefeed

import (
	"context"
	"sync/atomic"
	"time"
)

// Stream is one informer the outputs are rendered from. Its position is the
// revision up to which the feed has published every change the informer
// delivered: it advances when the feed's handler (Stream.Handler) has
// processed a notification, when a bookmark passes the informer's watch
// (Stream.Wrap) after the events before it were processed, and when a list
// is complete. Its floor (since) is the oldest position the feed can resume
// from: the informer's last list, or the last change dropped from history.
// Fields are guarded by the feed's lock.
type Stream struct {
	feed  *Feed
	index int
	name  string
	// current reads the revision the cluster is at (a consistent list),
	// to tell a position another replica issued from one nobody could have.
	current func(ctx context.Context) (uint64, error)

	pos, since uint64
	synced     bool
	// known is the largest revision known to exist: a position up to it
	// is legitimate even when this replica has not seen it yet; readAt is
	// when current was last read.
	known  uint64
	readAt atomic.Value
	// keys are the informer's objects as the handler has seen them, with
	// their revisions: a list is complete when they equal the list's.
	keys   map[string]uint64
	relist *relist
	// watchRev is the revision of the last object event the informer's
	// watch passed on; a bookmark after it is a position once the handler
	// has processed that event.
	watchRev uint64
	pending  *uint64
	pendAt   uint64
}

// relist is a list of the informer in progress: the handler is told of its
// differences from what it had; it is complete when its keys equal items.
type relist struct {
	rev        uint64
	items      map[string]uint64
	mismatches int
}

// Name is the stream's name, for messages.
func (s *Stream) Name() string {
	return s.name
}

// mismatch reports whether key differs between the handler's view and r.
func (s *Stream) mismatch(r *relist, key string) bool {
	have, ok1 := s.keys[key]
	want, ok2 := r.items[key]
	return ok1 != ok2 || have != want
}

// listed records a complete list of the informer at rev with items (key →
// revision). Nothing before rev can be proven complete any more: the list
// reports objects deleted since the last event only as gone, without when.
// Every subscription ends (its clients resume and are told to list again),
// and the position waits until the handler has processed the list.
func (s *Stream) listed(rev uint64, items map[string]uint64) {
	f := s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	s.since = max(s.since, rev)
	s.watchRev, s.pending = rev, nil
	r := &relist{rev: rev, items: items}
	for k := range s.keys {
		if s.mismatch(r, k) {
			r.mismatches++
		}
	}
	for k := range items {
		if _, ok := s.keys[k]; !ok {
			r.mismatches++
		}
	}
	s.relist = r
	f.closeSubscriptionsLocked()
	if r.mismatches == 0 {
		// Nothing changed: the handler gets no notification at all.
		s.completeLocked()
	}
	f.positionChangedLocked()
}

// completeLocked ends a relist: the handler has processed it.
func (s *Stream) completeLocked() {
	s.pos = max(s.pos, s.relist.rev)
	s.relist = nil
	s.synced = true
	s.applyPendingLocked()
}

// watched records an object event the informer's watch passed on.
func (s *Stream) watched(rev uint64) {
	s.feed.mu.Lock()
	defer s.feed.mu.Unlock()
	s.watchRev = max(s.watchRev, rev)
}

// bookmark records a bookmark of the informer's watch: every change up to
// rev has been passed on.
func (s *Stream) bookmark(rev uint64) {
	f := s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	s.pending, s.pendAt = &rev, s.watchRev
	if s.applyPendingLocked() {
		f.progressLocked(s)
	}
}

// applyPendingLocked advances the position to a bookmark once the handler
// has processed every event before it.
func (s *Stream) applyPendingLocked() bool {
	if s.pending == nil || s.relist != nil || s.pos < s.pendAt {
		return false
	}
	advanced := *s.pending > s.pos
	s.pos = max(s.pos, *s.pending)
	s.pending = nil
	if advanced {
		s.feed.positionChangedLocked()
	}
	return advanced
}

// observedLocked records that the handler processed a notification of key:
// an object at rev, or gone (deleted, or unknown: a list's deletion, whose
// revision the informer does not know).
func (s *Stream) observedLocked(key string, rev uint64, gone, revKnown bool) {
	if s.keys == nil {
		s.keys = map[string]uint64{}
	}
	r := s.relist
	if r != nil && revKnown && rev > r.rev {
		// An event of the watch after the list: the list was processed.
		s.completeLocked()
		r = nil
	}
	before := r != nil && s.mismatch(r, key)
	if gone {
		delete(s.keys, key)
	} else {
		s.keys[key] = rev
	}
	if r != nil {
		if after := s.mismatch(r, key); after != before {
			if after {
				r.mismatches++
			} else {
				r.mismatches--
			}
		}
		if r.mismatches == 0 {
			s.completeLocked()
			s.feed.progressLocked(s)
			s.feed.positionChangedLocked()
		}
		return
	}
	if revKnown && rev > s.pos {
		s.pos = rev
		s.feed.positionChangedLocked()
	}
	if s.applyPendingLocked() {
		s.feed.progressLocked(s)
	}
}

// readyLocked reports whether the stream's position is one to hand out.
func (s *Stream) readyLocked() bool {
	return s.synced && s.relist == nil && s.pos >= s.since
}

// legitimate reports whether rev is a revision the cluster has issued: one
// this stream has seen, or one a consistent read shows it has.
func (s *Stream) legitimate(ctx context.Context, rev uint64) (bool, uint64, error) {
	f := s.feed
	f.mu.Lock()
	known := max(s.known, s.pos)
	f.mu.Unlock()
	// At most one read a second: a client cannot make the server read the
	// cluster at the rate it sends made-up positions.
	if rev <= known || s.current == nil || time.Since(s.readAt.Load().(time.Time)) < time.Second {
		return rev <= known, known, nil
	}
	s.readAt.Store(time.Now())
	cur, err := s.current(ctx)
	if err != nil {
		return false, known, err
	}
	f.mu.Lock()
	s.known = max(s.known, cur)
	f.mu.Unlock()
	return rev <= cur, max(known, cur), nil
}
