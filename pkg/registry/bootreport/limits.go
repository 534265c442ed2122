package bootreport

import (
	"hash/fnv"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/osm-apiserver/osm-apiserver/pkg/lru"
)

// Limits bound the step records a replica accepts, per MachineDeployment
// and per machine, as token buckets: a burst, then a steady rate. A record
// beyond them is answered 429 with Retry-After. They are per replica: with
// N replicas behind kube-apiserver's Service, up to N times as many.
type Limits struct {
	// PerMachine and MachineBurst: a boot posts about two records per step.
	PerMachine   rate.Limit
	MachineBurst int
	// PerMachineDeployment and MachineDeploymentBurst: a scale-up of many
	// machines at once shares them.
	PerMachineDeployment   rate.Limit
	MachineDeploymentBurst int
}

// DefaultLimits allow a machine 30 records at once and one a second after;
// an MD 200 at once and 20 a second: a scale-up of 100 machines, each
// posting ~12 records over a few minutes, stays well within them, a node
// looping on a failing step does not.
var DefaultLimits = Limits{
	PerMachine: 1, MachineBurst: 30,
	PerMachineDeployment: 20, MachineDeploymentBurst: 200,
}

// Bounds of the buckets kept: the least recently used go first (a bucket
// gone is a full one again, which only errs towards accepting).
const (
	machineBuckets           = 16384
	machineDeploymentBuckets = 4096
)

// limiter holds the buckets of every MD and machine that posted lately.
type limiter struct {
	limits      Limits
	mu          sync.Mutex // get-or-add of a bucket
	machines    *lru.Cache[string, *rate.Limiter]
	deployments *lru.Cache[string, *rate.Limiter]
}

func newLimiter(l Limits) *limiter {
	return &limiter{
		limits:      l,
		machines:    lru.New[string, *rate.Limiter](machineBuckets),
		deployments: lru.New[string, *rate.Limiter](machineDeploymentBuckets),
	}
}

func (l *limiter) bucket(c *lru.Cache[string, *rate.Limiter], key string, r rate.Limit, burst int) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := c.Get(key)
	if !ok {
		b = rate.NewLimiter(r, burst)
		c.Add(key, b)
	}
	return b
}

// allow takes a token from the machine's and the MD's buckets, or returns
// how long until both have one (nothing taken then).
func (l *limiter) allow(md, machine string, now time.Time) (ok bool, retryAfter time.Duration) {
	m := l.bucket(l.machines, machine, l.limits.PerMachine, l.limits.MachineBurst)
	d := l.bucket(l.deployments, md, l.limits.PerMachineDeployment, l.limits.MachineDeploymentBurst)
	rm, rd := m.ReserveN(now, 1), d.ReserveN(now, 1)
	wait := max(rm.DelayFrom(now), rd.DelayFrom(now))
	if wait == 0 {
		return true, 0
	}
	rm.CancelAt(now)
	rd.CancelAt(now)
	return false, wait
}

// retryAfterSeconds rounds a wait up to whole seconds, at least one.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// maxStepLabels bounds the values of the step label of
// osm_apiserver_boot_reports_step_failures_total: step names come from
// nodes.
const maxStepLabels = 64

// boundedLabels passes the first max values it is given, then "other".
type boundedLabels struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

func (b *boundedLabels) value(v string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[v]; ok {
		return v
	}
	if len(b.seen) >= b.max {
		return "other"
	}
	if b.seen == nil {
		b.seen = map[string]struct{}{}
	}
	b.seen[v] = struct{}{}
	return v
}

// stripedLocks serialize the writes of a report on one replica, in a fixed
// number of locks: reports that share one only wait for each other.
type stripedLocks [64]sync.Mutex

func (l *stripedLocks) lock(key string) (unlock func()) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	m := &l[h.Sum32()%uint32(len(l))]
	m.Lock()
	return m.Unlock
}
