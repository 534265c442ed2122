package bootreport

import (
	"fmt"
	"sort"
	"testing"
	"time"
)

// rollout posts, for n machines of one MD of n replicas starting evenly
// within two minutes, 8 step records 30 s apart each, in time order, and
// returns how many the limiter refused.
func rollout(l Limits, n int) (refused int) {
	type record struct {
		at      time.Duration
		machine string
	}
	var records []record
	for i := range n {
		start := time.Duration(i) * 2 * time.Minute / time.Duration(n)
		for s := range 8 {
			records = append(records, record{start + time.Duration(s)*30*time.Second, fmt.Sprintf("team/pool-%04d", i)})
		}
	}
	sort.Slice(records, func(i, j int) bool { return records[i].at < records[j].at })
	lim := newLimiter(l)
	t0 := time.Unix(1_800_000_000, 0)
	for _, r := range records {
		if ok, _ := lim.allow("team/pool", n, r.machine, t0.Add(r.at)); !ok {
			refused++
		}
	}
	return refused
}

// A rollout of 1,000 machines of one MD at once loses no record on one
// replica; with an MD bucket that does not grow with its replicas (the
// limits before), it loses many.
func TestLimitsLetARolloutThrough(t *testing.T) {
	if refused := rollout(DefaultLimits, 1000); refused != 0 {
		t.Errorf("a rollout of 1,000 machines: %d of 8,000 records refused, want none", refused)
	}
	fixed := DefaultLimits
	fixed.PerReplica, fixed.BurstPerReplica = 0, 0
	if refused := rollout(fixed, 1000); refused == 0 {
		t.Error("with a fixed MD bucket the rollout lost nothing: the test does not load the MD's bucket")
	}
}

// accepted returns how many of the records machines post, each as fast as
// it can (every 10 ms) for d, the limiter accepts for an MD of replicas.
func accepted(l Limits, replicas, machines int, d time.Duration) int {
	lim := newLimiter(l)
	t0 := time.Unix(1_800_000_000, 0)
	n := 0
	for at := time.Duration(0); at < d; at += 10 * time.Millisecond {
		for m := range machines {
			if ok, _ := lim.allow("team/pool", replicas, fmt.Sprintf("team/pool-%04d", m), t0.Add(at)); ok {
				n++
			}
		}
	}
	return n
}

// Floods stay bounded: one machine looping gets its burst and PerMachine,
// every machine of an MD looping its MD's burst and rate for its replicas.
func TestLimitsHoldFloods(t *testing.T) {
	const d = 10 * time.Second
	l := DefaultLimits
	if n, most := accepted(l, 1, 1, d), l.MachineBurst+int(float64(l.PerMachine)*d.Seconds())+1; n > most {
		t.Errorf("one machine looping for %s: %d records accepted, want at most %d", d, n, most)
	}
	r, burst := l.forReplicas(100)
	if n, most := accepted(l, 100, 100, d), burst+int(float64(r)*d.Seconds())+1; n > most {
		t.Errorf("100 machines of an MD of 100 looping for %s: %d records accepted, want at most %d", d, n, most)
	}
	// Replicas raised later: the MD's bucket follows.
	lim := newLimiter(l)
	now := time.Unix(1_800_000_000, 0)
	lim.allow("team/pool", 1, "team/pool-a", now)
	lim.allow("team/pool", 1000, "team/pool-b", now)
	b, _ := lim.deployments.Get("team/pool")
	if r, burst := l.forReplicas(1000); b.Limit() != r || b.Burst() != burst {
		t.Errorf("MD bucket %v/%d after its replicas grew to 1,000, want %v/%d", b.Limit(), b.Burst(), r, burst)
	}
}
