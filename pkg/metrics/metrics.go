// Package metrics holds every Prometheus metric of osm-apiserver, under one
// prefix, osm_apiserver_. They are registered in the component-base legacy
// registry, which the generic API server serves on /metrics, by Register.
package metrics

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	// Registers client-go's workqueue metrics (depth, adds, latency, retries),
	// labelled with the queue's name.
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
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

	// RenderCacheHits counts render cache lookups that found a current result.
	RenderCacheHits = metrics.NewCounter(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "render_cache",
		Name:           "hits_total",
		Help:           "Render cache lookups answered from the cache.",
		StabilityLevel: metrics.ALPHA,
	})

	// RenderCacheMisses counts render cache lookups that had to render.
	RenderCacheMisses = metrics.NewCounter(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "render_cache",
		Name:           "misses_total",
		Help:           "Render cache lookups that had to render (or wait for a render in flight).",
		StabilityLevel: metrics.ALPHA,
	})

	// RenderCacheEntries is the number of results held in the render cache.
	RenderCacheEntries = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace:      namespace,
		Subsystem:      "render_cache",
		Name:           "entries",
		Help:           "Rendered results currently held in the render cache.",
		StabilityLevel: metrics.ALPHA,
	})

	// RendersWaiting is the number of renders waiting for one of the
	// --max-concurrent-renders slots.
	RendersWaiting = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace:      namespace,
		Subsystem:      "render",
		Name:           "waiting",
		Help:           "Renders waiting for a free slot (--max-concurrent-renders).",
		StabilityLevel: metrics.ALPHA,
	})
	// ReviewRendersWaiting is the number of ProfileReview renders waiting
	// for one of the reviews' own slots (never the render cache's).
	ReviewRendersWaiting = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace:      namespace,
		Subsystem:      "review",
		Name:           "renders_waiting",
		Help:           "ProfileReview renders waiting for one of the reviews' own slots (--max-concurrent-previews).",
		StabilityLevel: metrics.ALPHA,
	})
	// ReviewRenders counts the renders of ProfileReviews by result:
	// success, error, or canceled (the client went away first).
	ReviewRenders = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "review",
		Name:           "renders_total",
		Help:           "ProfileReview renders by result (success, error, canceled: the client went away before a slot was free).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})

	// WatchEvents counts events sent to watchers, by resource.
	WatchEvents = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "watch",
		Name:           "events_total",
		Help:           "Watch events sent to clients, by resource and event type.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"resource", "type"})

	// SyncerQueueDepth is the number of MachineDeployments waiting to be synced.
	SyncerQueueDepth = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace:      namespace,
		Subsystem:      "syncer",
		Name:           "queue_depth",
		Help:           "Number of MachineDeployments waiting to be synced.",
		StabilityLevel: metrics.ALPHA,
	})

	// SyncDuration observes one sync of a MachineDeployment, by result.
	SyncDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace:      namespace,
		Subsystem:      "syncer",
		Name:           "sync_duration_seconds",
		Help:           "Time to sync one MachineDeployment, by result.",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})

	// SyncFailures counts failed syncs.
	SyncFailures = metrics.NewCounter(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "syncer",
		Name:           "sync_failures_total",
		Help:           "Number of failed MachineDeployment syncs.",
		StabilityLevel: metrics.ALPHA,
	})

	// SyncerWriteFailures counts writes the cluster refused, by the API's
	// reason (Forbidden, Invalid, ...): only the syncer knows of them.
	SyncerWriteFailures = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "syncer",
		Name:           "write_failures_total",
		Help:           "Writes of Secrets, tokens or RBAC the cluster refused, by reason (Forbidden, Invalid, ...).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"reason"})

	// UserDataTooLarge counts syncs that found an MD's bootstrap payload over
	// its cloud's user-data limit (the UserDataTooLarge Event), by cloud
	// provider: only clouds with a known limit are counted, so the label has
	// few values.
	UserDataTooLarge = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "syncer",
		Name:           "user_data_too_large_total",
		Help:           "Syncs that found a MachineDeployment's bootstrap payload over its cloud's user-data limit, by cloud provider.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"cloud_provider"})

	// UpstreamOSMInstalled is 1 while upstream operating-system-manager's
	// OperatingSystemConfig CRD or webhooks are installed, else 0; an alert
	// can see what /readyz only says in its verbose answer.
	UpstreamOSMInstalled = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace:      namespace,
		Name:           "upstream_osm_installed",
		Help:           "1 while upstream operating-system-manager's OperatingSystemConfig CRD or webhook configurations are installed, else 0.",
		StabilityLevel: metrics.ALPHA,
	})

	// MachineJoins observes MachineJoin requests, by result: answered,
	// refused (403), unavailable (503) or failed.
	MachineJoins = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace:      namespace,
		Subsystem:      "machine_join",
		Name:           "duration_seconds",
		Help:           "Time to answer one MachineJoin, by result (answered, refused, unavailable, failed).",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 14),
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})

	// JoinCSRs counts the kubelet client CSRs of join identities the leader
	// decided, by decision (approved, denied).
	JoinCSRs = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "machine_join",
		Name:           "csrs_total",
		Help:           "Kubelet client CSRs of machine join identities decided, by decision (approved, denied).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"decision"})
)

// Boot reports: nodes' step records.
var (
	// BootReports counts step records received from nodes, by result:
	// accepted, forbidden, invalid, too_large, throttled or error.
	BootReports = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "boot_reports",
		Name:           "received_total",
		Help:           "Step records nodes posted to bootreports/<machine>/step, by result (accepted, forbidden, invalid, too_large, throttled, error).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})

	// BootStepFailures counts failed steps nodes reported, by step name (at
	// most 64 names per process; later ones are counted as "other").
	BootStepFailures = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "boot_reports",
		Name:           "step_failures_total",
		Help:           "Provisioning steps nodes reported failed, by step (names beyond the first 64 seen are \"other\").",
		StabilityLevel: metrics.ALPHA,
	}, []string{"step"})

	// ProvisioningDuration observes, per machine, the time from its boot's
	// first step record to the step that ended provisioning.
	ProvisioningDuration = metrics.NewHistogram(&metrics.HistogramOpts{
		Namespace:      namespace,
		Subsystem:      "boot_reports",
		Name:           "provisioning_duration_seconds",
		Help:           "Time from a machine's first step record to its provisioning's success.",
		Buckets:        []float64{15, 30, 60, 90, 120, 180, 240, 300, 450, 600, 900, 1800, 3600},
		StabilityLevel: metrics.ALPHA,
	})
)

var registerOnce sync.Once

// Collectors are the metrics Register registers: what /metrics serves under
// osm_apiserver_. The monitoring manifests' test checks every metric they
// name against this list.
func Collectors() []metrics.Registerable {
	return []metrics.Registerable{RenderDuration, RenderErrors, RenderCacheHits, RenderCacheMisses, RenderCacheEntries, RendersWaiting,
		ReviewRendersWaiting, ReviewRenders,
		WatchEvents, SyncerQueueDepth, SyncDuration, SyncFailures, SyncerWriteFailures, UserDataTooLarge, UpstreamOSMInstalled,
		MachineJoins, JoinCSRs, BootReports, BootStepFailures, ProvisioningDuration, ServingCertExpiry}
}

// Register adds the metrics to the legacy registry. Safe to call more than once.
func Register() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(Collectors()...)
	})
}

// ObserveSync records one sync that started at start and ended with err.
func ObserveSync(start time.Time, err error) {
	result := "success"
	if err != nil {
		result = "error"
		SyncFailures.Inc()
	}
	SyncDuration.WithLabelValues(result).Observe(time.Since(start).Seconds())
}

// ServingCertExpiry is when the serving certificate osm-apiserver keeps
// (pkg/servingcert) and its CA expire, by cert (serving or ca).
var ServingCertExpiry = metrics.NewGaugeVec(&metrics.GaugeOpts{
	Namespace:      namespace,
	Subsystem:      "serving_cert",
	Name:           "expiry_timestamp_seconds",
	Help:           "When the serving certificate osm-apiserver keeps in its Secret (cert=serving) and the CA that signed it (cert=ca) expire, in seconds since the epoch.",
	StabilityLevel: metrics.ALPHA,
}, []string{"cert"})
