package syncer

import (
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	// Registers client-go workqueue metrics (depth, adds, latency, retries)
	// under name="osm_syncer".
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
)

var (
	queueDepth = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace:      "osm",
		Subsystem:      "syncer",
		Name:           "queue_depth",
		Help:           "Number of MachineDeployments waiting to be synced.",
		StabilityLevel: metrics.ALPHA,
	})
	syncDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace:      "osm",
		Subsystem:      "syncer",
		Name:           "sync_duration_seconds",
		Help:           "Time to sync one MachineDeployment, by result.",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	syncFailures = metrics.NewCounter(&metrics.CounterOpts{
		Namespace:      "osm",
		Subsystem:      "syncer",
		Name:           "sync_failures_total",
		Help:           "Number of failed MachineDeployment syncs.",
		StabilityLevel: metrics.ALPHA,
	})
)

func init() {
	legacyregistry.MustRegister(queueDepth, syncDuration, syncFailures)
}

func observeSync(start time.Time, err error) {
	result := "success"
	if err != nil {
		result = "error"
		syncFailures.Inc()
	}
	syncDuration.WithLabelValues(result).Observe(time.Since(start).Seconds())
}
