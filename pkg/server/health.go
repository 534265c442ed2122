package server

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed"
)

// readiness reports ready once every informer the API reads has synced, the
// cluster facts are known and the change feed has a position: before that a
// LIST would answer from an empty cache, as if there were no MDs, every
// payload would be pending, and a watch could not start.
type readiness struct {
	informers map[string]cache.InformerSynced
	facts     interface {
		HasSynced() bool
		Err() error
	}
	feed interface{ HasSynced() bool }
}

// readiness returns the readiness of the API: of every informer and fact
// its outputs are rendered from, which are also the feed's streams.
func (in apiInputs) readiness(feed *changefeed.Feed) *readiness {
	return &readiness{
		informers: map[string]cache.InformerSynced{
			in.streams.machineDeployments.Name(): in.machineDeployments.HasSynced,
			in.streams.machineSets.Name():        in.machineSets.HasSynced,
			in.streams.profiles.Name():           in.profiles.HasSynced,
			in.streams.overlays.Name():           in.overlays.HasSynced,
			in.streams.tokens.Name():             in.tokens.HasSynced, // kubelet bootstrap and fetch tokens
			in.streams.payloads.Name():           in.payloads.HasSynced,
			in.streams.bootReports.Name():        in.bootReports.HasSynced,
			"machines":                           in.machines.HasSynced,
			"nodes":                              in.nodes.HasSynced,
		},
		facts: in.factsSource,
		feed:  feed,
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
	if !r.feed.HasSynced() {
		return fmt.Errorf("watch positions not known yet")
	}
	return nil
}
