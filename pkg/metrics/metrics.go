// Package metrics holds the Prometheus metrics of osm-apiserver. They are
// registered in the component-base legacy registry, which the generic API
// server serves on /metrics.
package metrics

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const namespace = "osm_apiserver"

var (
	// RenderDuration observes how long one render of a MachineDeployment took,
	// labelled by result (success or error).
	RenderDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace:      namespace,
		Subsystem:      "render",
		Name:           "duration_seconds",
		Help:           "Time spent rendering one MachineDeployment's configuration and payloads.",
		Buckets:        []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})

	// RenderErrors counts renders that failed.
	RenderErrors = metrics.NewCounter(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "render",
		Name:           "errors_total",
		Help:           "Renders that failed, e.g. because of a broken OperatingSystemProfile.",
		StabilityLevel: metrics.ALPHA,
	})

	// CacheHits counts render cache lookups that found a current result.
	CacheHits = metrics.NewCounter(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "render_cache",
		Name:           "hits_total",
		Help:           "Render cache lookups answered from the cache.",
		StabilityLevel: metrics.ALPHA,
	})

	// CacheMisses counts render cache lookups that had to render.
	CacheMisses = metrics.NewCounter(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "render_cache",
		Name:           "misses_total",
		Help:           "Render cache lookups that had to render (or wait for a render in flight).",
		StabilityLevel: metrics.ALPHA,
	})

	// CacheEntries is the number of results held in the render cache.
	CacheEntries = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace:      namespace,
		Subsystem:      "render_cache",
		Name:           "entries",
		Help:           "Rendered results currently held in the render cache.",
		StabilityLevel: metrics.ALPHA,
	})

	// WatchEvents counts events sent to watchers, by resource.
	WatchEvents = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "watch",
		Name:           "events_total",
		Help:           "Watch events sent to clients, by resource and event type.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"resource", "type"})
)

var registerOnce sync.Once

// Register adds the metrics to the legacy registry. Safe to call more than once.
func Register() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(RenderDuration, RenderErrors, CacheHits, CacheMisses, CacheEntries, WatchEvents)
	})
}
