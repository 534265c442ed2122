package resolve

import (
	"runtime"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/osm-apiserver/osm-apiserver/pkg/lru"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
)

// DefaultCacheSize is the default number of rendered MachineDeployments kept.
// One is a config plus two payloads, typically 20-60 KiB packed.
const DefaultCacheSize = 4096

// DefaultConcurrentRenders is how many renders run at once by default: twice
// the CPUs Go uses, at least 4. Renders are CPU-bound, so more at once would
// not finish sooner; each may hold up to 32 MiB of template values, so the
// bound is also one on the memory that renders take.
func DefaultConcurrentRenders() int {
	return max(4, 2*runtime.GOMAXPROCS(0))
}

// Cache keeps rendered outputs by a key made of all their inputs: a repeated
// GET or LIST does not render again, while a changed input always does, since
// a new key can never find an old output. Concurrent lookups of one key render
// once.
type Cache struct {
	outputs *lru.Cache[string, *Rendered]
	group   singleflight.Group
	// renders holds a token per render running: a hostile profile's renders,
	// each within its budget, cannot add up to more than this many budgets.
	renders chan struct{}
}

// NewCache returns a cache holding at most size outputs (DefaultCacheSize
// if size <= 0) and running at most renders renders at once
// (DefaultConcurrentRenders if renders <= 0).
func NewCache(size, renders int) *Cache {
	if size <= 0 {
		size = DefaultCacheSize
	}
	if renders <= 0 {
		renders = DefaultConcurrentRenders()
	}
	return &Cache{outputs: lru.New[string, *Rendered](size), renders: make(chan struct{}, renders)}
}

// Get returns the output cached under key, or calls render, caches its result
// and returns it. Failed renders are cached too: the same inputs fail the same
// way, and a broken profile must not be rendered again for every LIST.
func (c *Cache) Get(key string, render func() *Rendered) *Rendered {
	if r, ok := c.outputs.Get(key); ok {
		metrics.RenderCacheHits.Inc()
		return r
	}
	metrics.RenderCacheMisses.Inc()
	v, _, _ := c.group.Do(key, func() (any, error) {
		// A render that finished while this call waited for the group is
		// already cached: don't render twice.
		if r, ok := c.outputs.Get(key); ok {
			return r, nil
		}
		r, took := c.render(render)
		result := "success"
		if r.Err != nil {
			result = "error"
			metrics.RenderErrors.Inc()
		}
		metrics.RenderDuration.WithLabelValues(result).Observe(took.Seconds())
		c.outputs.Add(key, r)
		metrics.RenderCacheEntries.Set(float64(c.outputs.Len()))
		return r, nil
	})
	return v.(*Rendered)
}

// Run runs render once a slot is free, and caches nothing: a render of
// inputs under review, which no later request asks for again.
func (c *Cache) Run(render func() *Rendered) *Rendered {
	r, _ := c.render(render)
	return r
}

// render runs render once a slot is free; took is how long it ran.
func (c *Cache) render(render func() *Rendered) (r *Rendered, took time.Duration) {
	select {
	case c.renders <- struct{}{}:
	default:
		metrics.RendersWaiting.Inc()
		c.renders <- struct{}{}
		metrics.RendersWaiting.Dec()
	}
	defer func() { <-c.renders }()
	start := time.Now()
	r = render()
	return r, time.Since(start)
}

// Len returns the number of cached outputs.
func (c *Cache) Len() int {
	return c.outputs.Len()
}

// Size returns the number of outputs the cache holds at most.
func (c *Cache) Size() int {
	return c.outputs.Size()
}
