package lru

import (
	"slices"
	"testing"
)

func TestWeighted(t *testing.T) {
	var evicted []string
	c := NewWeighted(100, func(k string) { evicted = append(evicted, k) })
	c.Add("a", 40)
	c.Add("b", 40)
	c.Touch("a") // b is now the least recently used
	c.Add("c", 40)
	if !slices.Equal(evicted, []string{"b"}) || c.Len() != 2 || c.Bytes() != 80 {
		t.Fatalf("evicted %v, %d keys of %d bytes", evicted, c.Len(), c.Bytes())
	}
	// A new cost of a key counts; growing past the budget evicts others.
	c.Add("a", 90)
	if !slices.Equal(evicted, []string{"b", "c"}) || c.Bytes() != 90 {
		t.Fatalf("evicted %v, %d bytes", evicted, c.Bytes())
	}
	// One key over the budget alone stays.
	c.Add("a", 500)
	if c.Len() != 1 || c.Bytes() != 500 {
		t.Fatalf("%d keys of %d bytes", c.Len(), c.Bytes())
	}
	c.Remove("a")
	if c.Len() != 0 || c.Bytes() != 0 || c.Touch("a") || len(evicted) != 2 {
		t.Fatalf("after Remove: %d keys of %d bytes, evicted %v", c.Len(), c.Bytes(), evicted)
	}
}
