package resolve

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
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
	c := NewCache(0, 0)
	first := c.Get("md1", "k1", renderer(&calls, "one"))
	again := c.Get("md1", "k1", renderer(&calls, "changed"))
	if first != again || calls.Load() != 1 {
		t.Fatalf("same key rendered %d times", calls.Load())
	}
	// A changed input is a new key: never the old entry, and the MD's new
	// output replaces the old one.
	if e := c.Get("md1", "k2", renderer(&calls, "two")); userData(t, e.Bootstrap) != "two" || calls.Load() != 2 {
		t.Fatalf("new key got %q after %d renders", userData(t, e.Bootstrap), calls.Load())
	}
	if c.Len() != 1 {
		t.Fatalf("len %d, want 1 (one output per MD)", c.Len())
	}
	// No bound by count: every MD keeps its output.
	for i := range 100 {
		c.Get(types.UID(fmt.Sprint("md-", i)), "k", renderer(&calls, "x"))
	}
	if c.Len() != 101 {
		t.Fatalf("len %d, want 101", c.Len())
	}
	c.Forget("md1")
	if c.Len() != 100 {
		t.Fatalf("len %d after Forget, want 100", c.Len())
	}
}

// bodyRenderer renders an output with a config and payloads of data, which
// the cache charges to its budget.
func bodyRenderer(t testing.TB, calls *atomic.Int64, data *atomic.Value) func() *Rendered {
	return func() *Rendered {
		calls.Add(1)
		d := data.Load().(string)
		out, err := NewRendered(osm.ProfileReference{Name: "osp"}, &osm.OperatingSystemConfigSpec{OSName: "ubuntu", OSVersion: d},
			mustPayload("bootstrap "+d), mustPayload(strings.Repeat("provisioning "+d, 100)))
		if err != nil {
			t.Error(err)
		}
		return out
	}
}

// Bodies beyond the byte budget are dropped, least recently used first; the
// summary stays, and reading a dropped body renders the same inputs again.
func TestBodiesWithinBudget(t *testing.T) {
	var calls atomic.Int64
	var data atomic.Value
	data.Store("v1")
	probe := bodyRenderer(t, &calls, &data)()
	budget := 3 * probe.cost()
	c := NewCache(budget, 0)
	calls.Store(0)
	outs := make([]*Rendered, 10)
	for i := range outs {
		outs[i] = c.Get(types.UID(fmt.Sprint("md-", i)), "k", bodyRenderer(t, &calls, &data))
	}
	if n, bytes := c.Bodies(); n != 3 || bytes > budget {
		t.Fatalf("%d bodies of %d bytes kept, want 3 within %d", n, bytes, budget)
	}
	if c.Len() != 10 || calls.Load() != 10 {
		t.Fatalf("%d outputs after %d renders, want 10 and 10", c.Len(), calls.Load())
	}
	// The summary of a dropped body is there without a render.
	if outs[0].OSName != "ubuntu" || outs[0].Bootstrap.SHA256 == "" || calls.Load() != 10 {
		t.Fatalf("summary %q, digest %q", outs[0].OSName, outs[0].Bootstrap.SHA256)
	}
	// A lookup hits, whether or not its body is kept.
	if c.Get("md-0", "k", bodyRenderer(t, &calls, &data)) != outs[0] || calls.Load() != 10 {
		t.Fatalf("lookup of a dropped body rendered (%d renders)", calls.Load())
	}
	// Reading the body renders once again, with the same result.
	if got := userData(t, outs[0].Bootstrap); got != "bootstrap v1" || calls.Load() != 11 {
		t.Fatalf("user-data %q after %d renders", got, calls.Load())
	}
	cfg, err := outs[0].Config()
	if err != nil || cfg.OSVersion != "v1" || calls.Load() != 11 {
		t.Fatalf("config %+v, %v after %d renders", cfg, err, calls.Load())
	}
	if n, bytes := c.Bodies(); n > 3 || bytes > budget {
		t.Fatalf("%d bodies of %d bytes kept, want at most 3 within %d", n, bytes, budget)
	}
	// A render of the same key that no longer gives the same payloads is
	// an error, never other user-data under the old digest.
	data.Store("v2")
	for i := 10; i < 13; i++ { // drop outs[0] again
		c.Get(types.UID(fmt.Sprint("md-", i)), "k", bodyRenderer(t, &calls, &data))
	}
	if _, err := outs[0].Bootstrap.UserData(); err == nil || !strings.Contains(err.Error(), "gave other payloads") {
		t.Fatalf("changed render: err %v", err)
	}
}

func TestErrorsAreCached(t *testing.T) {
	var calls atomic.Int64
	c := NewCache(0, 0)
	failing := func() *Rendered {
		calls.Add(1)
		return &Rendered{Err: errors.New("osp-x: template: line 1: unclosed action")}
	}
	c.Get("md", "k", failing)
	if e := c.Get("md", "k", failing); e.Err == nil || calls.Load() != 1 {
		t.Fatalf("error entry %v after %d renders", e.Err, calls.Load())
	}
}

func TestConcurrentGetsRenderOnce(t *testing.T) {
	var calls atomic.Int64
	c := NewCache(0, 0)
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
			results[i] = c.Get(types.UID(key), key, slow(key))
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
	c := NewCache(0, bound)
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
		wg.Go(func() { c.Get(types.UID(fmt.Sprintf("md%d", i)), fmt.Sprintf("k%d", i), render) })
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
	c := NewCache(0, 0)
	c.Get("md", "key", renderer(&calls, "x"))
	b.ReportAllocs()
	for b.Loop() {
		c.Get("md", "key", renderer(&calls, "x"))
	}
}

// Readers of bodies being dropped and rendered again, all at once, read the
// same user-data (run with -race).
func TestConcurrentReadsOfDroppedBodies(t *testing.T) {
	var calls atomic.Int64
	var data atomic.Value
	data.Store("v1")
	probe := bodyRenderer(t, &calls, &data)()
	c := NewCache(2*probe.cost(), 0)
	outs := make([]*Rendered, 8)
	for i := range outs {
		outs[i] = c.Get(types.UID(fmt.Sprint("md-", i)), "k", bodyRenderer(t, &calls, &data))
	}
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			out := outs[i%len(outs)]
			if got, err := out.Bootstrap.UserData(); err != nil || string(got) != "bootstrap v1" {
				t.Errorf("user-data %q, %v", got, err)
			}
			if cfg, err := out.Config(); err != nil || cfg.OSVersion != "v1" {
				t.Errorf("config %+v, %v", cfg, err)
			}
		})
	}
	wg.Wait()
	if n, bytes := c.Bodies(); n > 2 || bytes > c.bodies.Budget() {
		t.Errorf("%d bodies of %d bytes kept, want at most 2 within %d", n, bytes, c.bodies.Budget())
	}
}
