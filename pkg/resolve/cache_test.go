package resolve

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

func renderer(calls *atomic.Int64, data string) func() *Rendered {
	return func() *Rendered {
		calls.Add(1)
		return &Rendered{Bootstrap: mustPayload(data)}
	}
}

func mustPayload(data string) Payload {
	p, err := NewPayload(osm.PayloadFormatCloudInit, []byte(data))
	if err != nil {
		panic(err) // a test helper: packing into memory cannot fail
	}
	return p
}

func userData(t testing.TB, p Payload) string {
	t.Helper()
	data, err := p.UserData()
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestGet(t *testing.T) {
	var calls atomic.Int64
	c := NewCache(2)
	first := c.Get("k1", renderer(&calls, "one"))
	again := c.Get("k1", renderer(&calls, "changed"))
	if first != again || calls.Load() != 1 {
		t.Fatalf("same key rendered %d times", calls.Load())
	}
	// A changed input is a new key: never the old entry.
	if e := c.Get("k2", renderer(&calls, "two")); userData(t, e.Bootstrap) != "two" || calls.Load() != 2 {
		t.Fatalf("new key got %q after %d renders", userData(t, e.Bootstrap), calls.Load())
	}
	// Bounded: a third key evicts the least recently used (k1).
	c.Get("k3", renderer(&calls, "three"))
	if c.Len() != 2 {
		t.Fatalf("len %d, want 2", c.Len())
	}
	c.Get("k1", renderer(&calls, "one"))
	if calls.Load() != 4 {
		t.Fatalf("evicted key not rendered again: %d renders", calls.Load())
	}
}

func TestErrorsAreCached(t *testing.T) {
	var calls atomic.Int64
	c := NewCache(10)
	failing := func() *Rendered {
		calls.Add(1)
		return &Rendered{Err: errors.New("osp-x: template: line 1: unclosed action")}
	}
	c.Get("k", failing)
	if e := c.Get("k", failing); e.Err == nil || calls.Load() != 1 {
		t.Fatalf("error entry %v after %d renders", e.Err, calls.Load())
	}
}

func TestConcurrentGetsRenderOnce(t *testing.T) {
	var calls atomic.Int64
	c := NewCache(100)
	start := make(chan struct{})
	slow := func(key string) func() *Rendered {
		return func() *Rendered {
			calls.Add(1)
			<-start
			return &Rendered{Bootstrap: mustPayload(key)}
		}
	}
	var wg sync.WaitGroup
	results := make([]*Rendered, 64)
	for i := range results {
		wg.Go(func() {
			key := fmt.Sprintf("k%d", i%4)
			results[i] = c.Get(key, slow(key))
		})
	}
	close(start)
	wg.Wait()
	if calls.Load() > 4 {
		t.Errorf("4 keys rendered %d times", calls.Load())
	}
	for i, e := range results {
		if want := fmt.Sprintf("k%d", i%4); userData(t, e.Bootstrap) != want {
			t.Errorf("result %d = %q, want %q", i, userData(t, e.Bootstrap), want)
		}
	}
}

func BenchmarkGetHit(b *testing.B) {
	var calls atomic.Int64
	c := NewCache(DefaultCacheSize)
	c.Get("key", renderer(&calls, "x"))
	b.ReportAllocs()
	for b.Loop() {
		c.Get("key", renderer(&calls, "x"))
	}
}
