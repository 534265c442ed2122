package resolve

import (
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/types"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/lru"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
)

// DefaultCacheBytes is the default budget of the rendered configs and
// payloads the render cache keeps: ~1,500 MDs of a mixed fleet (packed, an
// MD's body is 5-40 KiB, ~20 KiB on average). What every request needs of an
// output — summary, sizes, digests, errors — is kept for every MD beyond it.
// The bodies are read when a Secret is written, a payload served or a
// MachineJoin answered, and by full GETs and LISTs of OSCs.
const DefaultCacheBytes = 32 << 20

// maxMachineDeployments bounds what is kept per MD (the current output's
// summary, the MD's hash), far above any fleet: a safety net only, Forget
// drops an MD's entries when it is deleted.
const maxMachineDeployments = 1 << 20

// DefaultConcurrentRenders is how many renders run at once by default: twice
// the CPUs Go uses, at least 4. Renders are CPU-bound, so more at once would
// not finish sooner; each may hold up to 32 MiB of template values, so the
// bound is also one on the memory that renders take.
func DefaultConcurrentRenders() int {
	return max(4, 2*runtime.GOMAXPROCS(0))
}

// Cache keeps the current rendered output of every MachineDeployment, under a
// key made of all its inputs: a repeated GET or LIST does not render again,
// while a changed input always does, since a new key can never find an old
// output (and the MD's new output replaces the old one). Concurrent lookups
// of one key render once.
//
// There is no bound by count, so no fleet size past which every LIST renders
// everything again: an output's summary, payload sizes and digests (a few
// hundred bytes) stay while it is current, which is all a table of OSCs and
// the syncer's check of its Secrets read. The bodies — the rendered config
// and payloads, the bulk of the bytes — are bounded by a byte budget, least
// recently used dropped first; reading a dropped body renders again (see
// Rendered).
type Cache struct {
	mu      sync.Mutex
	outputs map[types.UID]slot
	bodies  *lru.Weighted[*Rendered]
	group   singleflight.Group
	// renders holds a token per render running: a hostile profile's renders,
	// each within its budget, cannot add up to more than this many budgets.
	renders chan struct{}
}

// slot is the current output of an MD and the key it was rendered under.
type slot struct {
	key string
	out *Rendered
}

// NewCache returns a cache keeping at most budget bytes of rendered configs
// and payloads (DefaultCacheBytes if budget <= 0) and running at most renders
// renders at once (DefaultConcurrentRenders if renders <= 0).
func NewCache(budget int64, renders int) *Cache {
	if budget <= 0 {
		budget = DefaultCacheBytes
	}
	if renders <= 0 {
		renders = DefaultConcurrentRenders()
	}
	return &Cache{
		outputs: map[types.UID]slot{},
		bodies:  lru.NewWeighted(budget, (*Rendered).drop),
		renders: make(chan struct{}, renders),
	}
}

// Get returns the output of the MD uid cached under key, or calls render,
// caches its result as the MD's output and returns it. Failed renders are
// cached too: the same inputs fail the same way, and a broken profile must not
// be rendered again for every LIST.
func (c *Cache) Get(uid types.UID, key string, render func() *Rendered) *Rendered {
	if r, ok := c.lookup(uid, key); ok {
		metrics.RenderCacheHits.Inc()
		return r
	}
	metrics.RenderCacheMisses.Inc()
	v, _, _ := c.group.Do(key, func() (any, error) {
		// A render that finished while this call waited for the group is
		// already cached: don't render twice.
		if r, ok := c.lookup(uid, key); ok {
			return r, nil
		}
		r, took := c.render(render)
		result := "success"
		if r.Err != nil {
			result = "error"
			metrics.RenderErrors.Inc()
		}
		metrics.RenderDuration.WithLabelValues(result).Observe(took.Seconds())
		c.keep(uid, key, r, render)
		return r, nil
	})
	return v.(*Rendered)
}

func (c *Cache) lookup(uid types.UID, key string) (*Rendered, bool) {
	c.mu.Lock()
	s, ok := c.outputs[uid]
	c.mu.Unlock()
	if !ok || s.key != key {
		return nil, false
	}
	return s.out, true
}

// keep makes r, rendered by render under key, the MD's output, charging its
// body to the budget.
func (c *Cache) keep(uid types.UID, key string, r *Rendered, render func() *Rendered) {
	if r.Err == nil && r.body != nil {
		r.budget = c.bodies
		r.reload = func() *Rendered {
			again, _ := c.render(render)
			return again
		}
		if view := r.view; view != nil {
			// The view renders in a slot of the cache's too.
			r.view = func() (*osm.OperatingSystemConfigSpec, error) {
				defer c.acquire()()
				return view()
			}
		}
	}
	c.mu.Lock()
	old := c.outputs[uid]
	if len(c.outputs) < maxMachineDeployments || old.out != nil {
		c.outputs[uid] = slot{key: key, out: r}
	}
	n := len(c.outputs)
	c.mu.Unlock()
	if old.out != nil && old.out != r {
		c.bodies.Remove(old.out)
	}
	if r.budget != nil {
		c.bodies.Add(r, r.cost())
	}
	metrics.RenderCacheEntries.Set(float64(n))
}

// Forget drops the output of the MD uid.
func (c *Cache) Forget(uid types.UID) {
	c.mu.Lock()
	old, ok := c.outputs[uid]
	delete(c.outputs, uid)
	n := len(c.outputs)
	c.mu.Unlock()
	if ok {
		c.bodies.Remove(old.out)
	}
	metrics.RenderCacheEntries.Set(float64(n))
}

// render runs render once a slot is free; took is how long it ran.
func (c *Cache) render(render func() *Rendered) (r *Rendered, took time.Duration) {
	defer c.acquire()()
	start := time.Now()
	r = render()
	return r, time.Since(start)
}

// acquire waits for a free render slot; the caller calls what it returns to
// free it.
func (c *Cache) acquire() (release func()) {
	select {
	case c.renders <- struct{}{}:
	default:
		metrics.RendersWaiting.Inc()
		c.renders <- struct{}{}
		metrics.RendersWaiting.Dec()
	}
	return func() { <-c.renders }
}

// Len returns the number of cached outputs.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.outputs)
}

// Bodies returns the number of outputs whose body is kept, and its bytes.
func (c *Cache) Bodies() (int, int64) {
	return c.bodies.Len(), c.bodies.Bytes()
}
