package server

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/tools/cache"
)

// readiness reports ready once every informer the API reads has synced and
// the cluster facts are known: before that a LIST would answer from an empty
// cache, as if there were no MDs, and every payload would be pending.
type readiness struct {
	informers map[string]cache.InformerSynced
	facts     interface {
		HasSynced() bool
		Err() error
	}
}

var _ healthz.HealthChecker = &readiness{}

// Name implements healthz.HealthChecker.
func (r *readiness) Name() string {
	return "osm-informers-and-facts"
}

// Check implements healthz.HealthChecker.
func (r *readiness) Check(_ *http.Request) error {
	var waiting []string
	for name, synced := range r.informers {
		if !synced() {
			waiting = append(waiting, name)
		}
	}
	if len(waiting) > 0 {
		return fmt.Errorf("informers not synced yet: %s", strings.Join(sorted(waiting), ", "))
	}
	if !r.facts.HasSynced() {
		if err := r.facts.Err(); err != nil {
			return fmt.Errorf("no cluster facts yet: %w", err)
		}
		return fmt.Errorf("no cluster facts yet")
	}
	return nil
}
