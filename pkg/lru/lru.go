// Package lru is the one bounded cache of osm-apiserver: a fixed number of
// entries, least recently used evicted first, safe for concurrent use. Every
// cache in the process is one of these (docs/design.md lists them), so there is
// one eviction policy to reason about.
package lru

import (
	"container/list"
	"sync"
)

// Cache holds at most a fixed number of values by key.
type Cache[K comparable, V any] struct {
	mu      sync.Mutex
	size    int
	entries map[K]*list.Element
	order   list.List // front: most recently used
}

type entry[K comparable, V any] struct {
	key   K
	value V
}

// New returns a cache of at most size entries (at least one).
func New[K comparable, V any](size int) *Cache[K, V] {
	size = max(size, 1)
	return &Cache[K, V]{size: size, entries: make(map[K]*list.Element, min(size, 1024))}
}

// Get returns the value of key and marks it used.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry[K, V]).value, true
}

// Add sets the value of key, evicting the least recently used entry when full.
func (c *Cache[K, V]) Add(key K, value V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		el.Value.(*entry[K, V]).value = value
		c.order.MoveToFront(el)
		return
	}
	c.entries[key] = c.order.PushFront(&entry[K, V]{key: key, value: value})
	if c.order.Len() > c.size {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.entries, oldest.Value.(*entry[K, V]).key)
	}
}

// Remove drops key.
func (c *Cache[K, V]) Remove(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.order.Remove(el)
		delete(c.entries, key)
	}
}

// Len returns the number of entries.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// Size returns the number of entries the cache holds at most.
func (c *Cache[K, V]) Size() int {
	return c.size
}
