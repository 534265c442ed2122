package lru

import (
	"fmt"
	"sync"
	"testing"
)

func TestEvictsLeastRecentlyUsed(t *testing.T) {
	c := New[string, int](2)
	c.Add("a", 1)
	c.Add("b", 2)
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("Get(a) = %d, %v", v, ok)
	}
	c.Add("c", 3) // b is the least recently used
	if _, ok := c.Get("b"); ok {
		t.Error("b was not evicted")
	}
	for k, want := range map[string]int{"a": 1, "c": 3} {
		if v, ok := c.Get(k); !ok || v != want {
			t.Errorf("Get(%s) = %d, %v; want %d", k, v, ok, want)
		}
	}
	if c.Len() != 2 || c.Size() != 2 {
		t.Errorf("Len %d, Size %d; want 2, 2", c.Len(), c.Size())
	}
}

func TestAddReplacesAndRemove(t *testing.T) {
	c := New[int, string](0) // at least one entry
	c.Add(1, "x")
	c.Add(1, "y")
	if v, _ := c.Get(1); v != "y" || c.Len() != 1 {
		t.Fatalf("Get(1) = %q, Len %d", v, c.Len())
	}
	c.Remove(1)
	c.Remove(2)
	if _, ok := c.Get(1); ok || c.Len() != 0 {
		t.Fatal("Remove kept the entry")
	}
}

func TestConcurrentUse(t *testing.T) {
	c := New[string, int](16)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				k := fmt.Sprint((g * i) % 32)
				c.Add(k, i)
				c.Get(k)
				if i%7 == 0 {
					c.Remove(k)
				}
			}
		}()
	}
	wg.Wait()
	if c.Len() > 16 {
		t.Fatalf("Len %d over the bound", c.Len())
	}
}
