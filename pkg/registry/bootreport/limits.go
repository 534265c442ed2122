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
//
// An MD's bucket grows with its replicas, so that a rollout of thousands of
// machines at once is not throttled while a flood still is: one machine
// looping gets at most PerMachine after its burst, all of an MD's machines
// looping at most max(PerMachineDeployment, replicas × PerReplica).
type Limits struct {
	// PerMachine and MachineBurst: a boot posts about two records per step.
	PerMachine   rate.Limit
	MachineBurst int
	// PerMachineDeployment and MachineDeploymentBurst: the least an MD's
	// machines share, whatever its replicas.
	PerMachineDeployment   rate.Limit
	MachineDeploymentBurst int
	// PerReplica and BurstPerReplica: what each replica of an MD
	// (spec.replicas) adds to its MD's rate and burst.
	PerReplica      rate.Limit
	BurstPerReplica int
}

// DefaultLimits allow a machine 30 records at once and one a second after.
// An MD gets at least 200 at once and 20 a second, and 3 at once and 0.2 a
// second per replica: a machine posts about 12 records over a few minutes
// (one every 10-30 s), so 1,000 machines of one MD starting within two
// minutes post about 35 a second, within the 200 a second such an MD gets;
// every one of them looping is held to those 200.
var DefaultLimits = Limits{
	PerMachine: 1, MachineBurst: 30,
	PerMachineDeployment: 20, MachineDeploymentBurst: 200,
	PerReplica: 0.2, BurstPerReplica: 3,
}

// forReplicas returns the rate and burst of the bucket of an MD of replicas.
func (l Limits) forReplicas(replicas int) (rate.Limit, int) {
	return max(l.PerMachineDeployment, rate.Limit(replicas)*l.PerReplica), max(l.MachineDeploymentBurst, replicas*l.BurstPerReplica)
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
// how long until both have one (nothing taken then). The MD's bucket follows
// its replicas as they change.
func (l *limiter) allow(md string, replicas int, machine string, now time.Time) (ok bool, retryAfter time.Duration) {
	m := l.bucket(l.machines, machine, l.limits.PerMachine, l.limits.MachineBurst)
	r, burst := l.limits.forReplicas(replicas)
	d := l.bucket(l.deployments, md, r, burst)
	if d.Limit() != r || d.Burst() != burst {
		d.SetLimitAt(now, r)
		d.SetBurstAt(now, burst)
	}
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
