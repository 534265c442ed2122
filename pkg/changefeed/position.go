package changefeed

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Position is how far a reader has seen the inputs of every output: for each
// stream (an informer the outputs are rendered from), the kube-apiserver
// resourceVersion up to which it has seen every change, and the version of
// the cluster facts. It is the resourceVersion of the virtual resources,
// written "r1.r2…rn.facts": every replica, before and after a restart, reads
// it the same way, because each part comes from the cluster, not from the
// replica. Clients treat it as opaque (client-go and kubectl only pass it
// back); only this package compares them.
type Position struct {
	// Revs holds one revision per stream, in the order of Feed.AddStream.
	Revs []uint64
	// Facts is the version of the cluster facts (see Feed.New).
	Facts string
}

// String returns the resourceVersion of p.
func (p Position) String() string {
	b := make([]byte, 0, 12*len(p.Revs)+len(p.Facts)+1)
	for _, r := range p.Revs {
		b = strconv.AppendUint(b, r, 10)
		b = append(b, '.')
	}
	return string(append(b, p.Facts...))
}

// Equal reports whether p and o are the same position.
func (p Position) Equal(o Position) bool {
	return p.Facts == o.Facts && slices.Equal(p.Revs, o.Revs)
}

// Clone returns a copy of p that shares nothing with it.
func (p Position) Clone() Position {
	return Position{Revs: slices.Clone(p.Revs), Facts: p.Facts}
}

// ErrMalformed says a resourceVersion is not one this server or an earlier
// version of it issued: a client error (400).
var ErrMalformed = errors.New("malformed resourceVersion")

// Parse reads a resourceVersion that Position.String wrote. A plain number
// (the resourceVersions of osm-apiserver before they were positions) parses
// as a position with no streams: every feed refuses it as too old, so its
// clients list again.
func Parse(rv string) (Position, error) {
	parts := strings.Split(rv, ".")
	if len(parts) == 1 {
		if _, err := strconv.ParseUint(rv, 10, 64); err != nil {
			return Position{}, fmt.Errorf("%w %q", ErrMalformed, rv)
		}
		return Position{Facts: rv}, nil
	}
	p := Position{Revs: make([]uint64, len(parts)-1), Facts: parts[len(parts)-1]}
	for i, s := range parts[:len(parts)-1] {
		r, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return Position{}, fmt.Errorf("%w %q", ErrMalformed, rv)
		}
		p.Revs[i] = r
	}
	if p.Facts == "" {
		return Position{}, fmt.Errorf("%w %q", ErrMalformed, rv)
	}
	return p, nil
}

// TooOldError says the feed cannot prove it has every change after a
// position: it started or re-listed an input after it, dropped changes after
// it from its history, has other facts, or was configured with other inputs.
// The API answers 410 Gone; clients list again.
type TooOldError struct {
	Requested string
	Reason    string
}

func (e *TooOldError) Error() string {
	return fmt.Sprintf("resourceVersion %s is too old: %s", e.Requested, e.Reason)
}

// TooLargeError says a position is ahead of what the cluster has issued:
// no replica can have served it. The API answers as kube-apiserver does, 504
// with "Too large resource version" and a Retry-After.
type TooLargeError struct {
	Requested, Current string
	Stream             string
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("too large resource version: %s, current: %s (%s)", e.Requested, e.Current, e.Stream)
}

// NotReadyError says the feed has no position yet: an input has not been
// listed, or is being listed again. The API answers 503 with Retry-After.
type NotReadyError struct {
	Waiting []string
}

func (e *NotReadyError) Error() string {
	return "watch positions not known yet: " + strings.Join(e.Waiting, ", ")
}
