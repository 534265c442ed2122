package resolve

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/component-base/metrics/testutil"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
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
	c := NewCache(2, 0)
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
	c := NewCache(10, 0)
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
	c := NewCache(100, 0)
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

// No more than the bound run at once, whatever the number of keys asked for;
// the others wait (and say so in osm_apiserver_render_waiting), then render.
func TestRendersAreBounded(t *testing.T) {
	const bound, keys = 3, 12
	c := NewCache(100, bound)
	metrics.Register() // unregistered metrics do not count
	waiting := func() float64 {
		v, err := testutil.GetGaugeMetricValue(metrics.RendersWaiting)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	var running, most atomic.Int64
	release := make(chan struct{})
	render := func() *Rendered {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		running.Add(-1)
		return &Rendered{}
	}
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() { c.Get(fmt.Sprintf("k%d", i), render) })
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor("the slots to fill", func() bool { return running.Load() == bound })
	waitFor("the others to wait", func() bool { return waiting() == keys-bound })
	close(release)
	wg.Wait()
	if m := most.Load(); m != bound {
		t.Errorf("%d renders ran at once, want at most (and here exactly) %d", m, bound)
	}
	if c.Len() != keys || waiting() != 0 {
		t.Errorf("%d outputs cached, %v renders still waiting", c.Len(), waiting())
	}
}

func BenchmarkGetHit(b *testing.B) {
	var calls atomic.Int64
	c := NewCache(DefaultCacheSize, 0)
	c.Get("key", renderer(&calls, "x"))
	b.ReportAllocs()
	for b.Loop() {
		c.Get("key", renderer(&calls, "x"))
	}
}
