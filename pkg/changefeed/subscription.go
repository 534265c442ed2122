package changefeed

import (
	"context"
	"fmt"
	"strconv"
)

// Subscription receives the events after the position it started from.
type Subscription struct {
	feed *Feed
	// From is the position the subscription started from.
	From Position
	// Replay holds the kept events after From, oldest first; consume it
	// before C.
	Replay []Event
	ch     chan Event
}

// C delivers new events. It is closed when the subscriber fell too far behind,
// when an input was listed again, and after Close.
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

// New reports whether ev is a change a reader at position p has not seen.
func (p Position) New(ev Event) bool {
	if ev.Stream < 0 {
		return ev.Facts != p.Facts
	}
	return ev.Rev > p.Revs[ev.Stream]
}

// Advance moves p, a reader's position, past ev: the reader has all of a
// change only after the change's last event.
func (p *Position) Advance(ev Event) {
	switch {
	case ev.Stream < 0:
		if ev.Last {
			p.Facts = ev.Facts
		}
	case ev.Progress || ev.Last:
		p.Revs[ev.Stream] = max(p.Revs[ev.Stream], ev.Rev)
	case ev.Rev > 0:
		p.Revs[ev.Stream] = max(p.Revs[ev.Stream], ev.Rev-1)
	}
}

// Check returns nil when from is a position the cluster has issued for the
// inputs this feed reads: a TooOldError when it is of other inputs, a
// TooLargeError when a revision is beyond what the cluster has issued. A
// revision this replica has not reached yet is fine: its informer is behind
// the one of the replica that issued it, or nothing changed since.
func (f *Feed) Check(ctx context.Context, from Position) error {
	f.mu.Lock()
	n := len(f.streams)
	f.mu.Unlock()
	if len(from.Revs) != n {
		return &TooOldError{Requested: from.String(), Reason: "it is not a position of this server's inputs (an earlier version or other flags)"}
	}
	for i, s := range f.streams {
		ok, current, err := s.legitimate(ctx, from.Revs[i])
		if err != nil {
			return fmt.Errorf("failed to read the current revision of %s: %w", s.name, err)
		}
		if !ok {
			return &TooLargeError{Requested: from.String(), Current: strconv.FormatUint(current, 10), Stream: s.name}
		}
	}
	return nil
}

// Subscribe returns a subscription to the changes after from, with the kept
// events after it to replay. It fails with a TooOldError when this replica
// cannot prove it has every change after from (see TooOldError), and as
// Check does.
func (f *Feed) Subscribe(ctx context.Context, from Position) (*Subscription, error) {
	if err := f.Check(ctx, from); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	facts := f.facts()
	if facts == "" {
		return nil, &NotReadyError{Waiting: []string{"cluster facts"}}
	}
	if from.Facts != facts {
		return nil, &TooOldError{Requested: from.String(), Reason: "the cluster facts changed since (or differ on this replica)"}
	}
	for i, s := range f.streams {
		switch {
		case !s.synced:
			return nil, &NotReadyError{Waiting: []string{s.name}}
		case from.Revs[i] < s.since:
			return nil, &TooOldError{Requested: from.String(), Reason: fmt.Sprintf("%s is complete from revision %d on this replica", s.name, s.since)}
		}
	}
	sub := &Subscription{feed: f, From: from.Clone(), ch: make(chan Event, subscriptionBuffer)}
	n := len(f.history)
	for i := range n {
		ev := f.history[i]
		if n == cap(f.history) {
			ev = f.history[(f.next+i)%n]
		}
		if from.New(ev) {
			sub.Replay = append(sub.Replay, ev)
		}
	}
	f.subs[sub] = struct{}{}
	return sub, nil
}
