package server

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
	"github.com/osm-apiserver/osm-apiserver/pkg/migrate"
)

// upstreamCheck warns while upstream operating-system-manager's
// OperatingSystemConfig CRD or webhook configurations are installed: `kubectl
// get osc` may then mean upstream's, and its webhooks still act on
// MachineDeployments. It warns in the log, in a Warning Event on our
// APIService and in its line of /readyz?verbose, and never fails readiness:
// the API and the syncer work, and the syncer must run for
// `osm-apiserver migrate` to finish the switch (docs/design.md).
type upstreamCheck struct {
	management, worker kubernetes.Interface // worker: nil when it is the management cluster
	period             time.Duration        // 0: upstreamCheckPeriod
	found              atomic.Pointer[[]string]
}

// upstreamCheckPeriod is how often the check looks: a discovery request and
// two small lists per cluster.
const upstreamCheckPeriod = 10 * time.Second

// upstreamWarnEvery is how often a warning that still holds is repeated
// (Events live an hour).
const upstreamWarnEvery = 30 * time.Minute

var _ healthz.HealthChecker = &upstreamCheck{}

const upstreamCheckName = "upstream-osm"

// Name implements healthz.HealthChecker. /readyz?verbose lists checks by
// name and result only, so while upstream is installed the name carries the
// warning: "[+]upstream-osm: warning: ... ok". /readyz/upstream-osm is the
// check's own path whatever it says.
func (u *upstreamCheck) Name() string {
	found := u.found.Load()
	if found == nil || len(*found) == 0 {
		return upstreamCheckName
	}
	return upstreamCheckName + ": warning: " + warning(*found)
}

// Check implements healthz.HealthChecker: upstream's leftovers do not make
// osm-apiserver unready.
func (u *upstreamCheck) Check(*http.Request) error { return nil }

func warning(found []string) string {
	return fmt.Sprintf("upstream operating-system-manager is still installed (%s): `kubectl get osc` may show upstream's "+
		"OperatingSystemConfigs and its webhooks still act on MachineDeployments; run osm-apiserver migrate (docs/migrating.md)",
		strings.Join(found, ", "))
}

// run checks every upstreamCheckPeriod until ctx ends.
func (u *upstreamCheck) run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("upstream-check")
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: u.management.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "osm-apiserver"})
	// Where `kubectl get osc` goes: the Event is on it.
	apiService := &corev1.ObjectReference{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService", Name: "v1alpha1.osm.k8c.io"}
	var warned time.Time
	var failed string // the last failure, logged once
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		found, err := migrate.Installed(ctx, u.management, u.worker)
		if err != nil {
			if err.Error() != failed {
				logger.Error(err, "Failed to check for upstream operating-system-manager; will retry")
				failed = err.Error()
			}
			return
		}
		failed = ""
		installed := 0.0
		if len(found) > 0 {
			installed = 1
		}
		metrics.UpstreamOSMInstalled.Set(installed)
		before := u.found.Swap(&found)
		changed := before == nil || !slices.Equal(*before, found)
		switch {
		case len(found) == 0 && changed && before != nil && len(*before) > 0:
			logger.Info("Upstream operating-system-manager is no longer installed")
		case len(found) > 0 && (changed || time.Since(warned) > upstreamWarnEvery):
			logger.Info("Upstream operating-system-manager is still installed: run osm-apiserver migrate (docs/migrating.md)", "found", found)
			recorder.Event(apiService, corev1.EventTypeWarning, "UpstreamOSMInstalled", warning(found))
			warned = time.Now()
		}
	}, cmp.Or(u.period, upstreamCheckPeriod))
}
