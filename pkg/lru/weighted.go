package lru

import (
	"container/list"
	"sync"
)

// Weighted is the byte-bounded variant of Cache: each key has a cost (its
// bytes), and the least recently used keys are evicted while the costs add up
// to more than the budget. It holds no values: evicting a key calls onEvict,
// outside the cache's lock, for the owner to drop what the key stands for.
type Weighted[K comparable] struct {
	mu      sync.Mutex
	budget  int64
	total   int64
	entries map[K]*list.Element
	order   list.List // front: most recently used
	onEvict func(K)
}

type weightedEntry[K comparable] struct {
	key  K
	cost int64
}

// NewWeighted returns a cache whose keys cost at most budget bytes together
// (at least one key is always kept); onEvict is called for every key evicted.
func NewWeighted[K comparable](budget int64, onEvict func(K)) *Weighted[K] {
	return &Weighted[K]{budget: budget, entries: map[K]*list.Element{}, onEvict: onEvict}
}

// Add sets the cost of key and marks it used, then evicts the least recently
// used keys over the budget.
func (c *Weighted[K]) Add(key K, cost int64) {
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*weightedEntry[K])
		c.total += cost - e.cost
		e.cost = cost
		c.order.MoveToFront(el)
	} else {
		c.entries[key] = c.order.PushFront(&weightedEntry[K]{key: key, cost: cost})
		c.total += cost
	}
	var evicted []K
	for c.total > c.budget && c.order.Len() > 1 {
		oldest := c.order.Back()
		e := oldest.Value.(*weightedEntry[K])
		c.order.Remove(oldest)
		delete(c.entries, e.key)
		c.total -= e.cost
		evicted = append(evicted, e.key)
	}
	c.mu.Unlock()
	for _, k := range evicted {
		c.onEvict(k)
	}
}

// Touch marks key used; it reports whether key is there.
func (c *Weighted[K]) Touch(key K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if ok {
		c.order.MoveToFront(el)
	}
	return ok
}

// Remove drops key without calling onEvict.
func (c *Weighted[K]) Remove(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.total -= el.Value.(*weightedEntry[K]).cost
		c.order.Remove(el)
		delete(c.entries, key)
	}
}

// Len returns the number of keys.
func (c *Weighted[K]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// Bytes returns the costs of the keys added up.
func (c *Weighted[K]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Budget returns the most the costs add up to.
func (c *Weighted[K]) Budget() int64 {
	return c.budget
}
