// Package rendercache keeps rendered results keyed by everything that affects
// them, so a repeated GET or LIST does not render again while a changed input
// always does: the caller builds the key from all inputs, and a new key can
// never find an old entry.
package rendercache

import (
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/utils/lru"

	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
)

// DefaultSize is the default number of entries kept. One entry is one
// MachineDeployment's config plus two payloads, typically 20-60 KiB.
const DefaultSize = 4096

// Cache is a bounded LRU of rendered entries. Concurrent lookups of the same
// key render once.
type Cache struct {
	entries *lru.Cache
	size    int
	group   singleflight.Group
}

// New returns a cache holding at most size entries.
func New(size int) *Cache {
	if size <= 0 {
		size = DefaultSize
	}
	return &Cache{entries: lru.New(size), size: size}
}

// Size returns the number of entries the cache holds at most.
func (c *Cache) Size() int {
	return c.size
}

// Get returns the entry cached under key, or calls render, caches its result and
// returns it. Failed renders are cached too: the same inputs fail the same way,
// and a broken profile must not be rendered again for every LIST.
func (c *Cache) Get(key string, render func() *Entry) *Entry {
	if v, ok := c.entries.Get(key); ok {
		metrics.CacheHits.Inc()
		return v.(*Entry)
	}
	metrics.CacheMisses.Inc()
	v, _, _ := c.group.Do(key, func() (any, error) {
		// A render that finished while this call waited for the group is
		// already cached: don't render twice.
		if v, ok := c.entries.Get(key); ok {
			return v, nil
		}
		start := time.Now()
		e := render()
		result := "success"
		if e.Err != nil {
			result = "error"
			metrics.RenderErrors.Inc()
		}
		metrics.RenderDuration.WithLabelValues(result).Observe(time.Since(start).Seconds())
		c.entries.Add(key, e)
		metrics.CacheEntries.Set(float64(c.entries.Len()))
		return e, nil
	})
	return v.(*Entry)
}

// Len returns the number of cached entries.
func (c *Cache) Len() int {
	return c.entries.Len()
}
