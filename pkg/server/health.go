package server

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/server/healthz"
)

// readiness reports ready once every informer the API reads has synced, the
// cluster facts are known and the change feed has a position: before that a
// LIST would answer from an empty cache, as if there were no MDs, every
// payload would be pending, and a watch could not start.
type readiness struct {
	informers interface{ Unsynced() []string }
	facts     interface {
		HasSynced() bool
		Err() error
	}
	feed interface{ HasSynced() bool }
}

// readiness returns the readiness of the API: of every informer and fact
// its outputs are rendered from.
func (in *inputs) readiness() *readiness {
	return &readiness{informers: in.informers, facts: in.facts, feed: in.feed}
}

var _ healthz.HealthChecker = &readiness{}

// Name implements healthz.HealthChecker.
func (r *readiness) Name() string {
	return "osm-informers-and-facts"
}

// Check implements healthz.HealthChecker.
func (r *readiness) Check(_ *http.Request) error {
	if waiting := r.informers.Unsynced(); len(waiting) > 0 {
		return fmt.Errorf("informers not synced yet: %s", strings.Join(waiting, ", "))
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

// frontProxyCA reports ready once the CA that verifies kube-apiserver's
// front-proxy client certificate is loaded. k8s.io/apiserver loads it from
// kube-system/extension-apiserver-authentication by an informer that syncs
// after the server already serves: until then a request kube-apiserver
// proxies (every node's MachineJoin and boot report) is system:anonymous and
// refused, so a replica must not take traffic before.
type frontProxyCA struct {
	ca interface{ CurrentCABundleContent() []byte }
}

var _ healthz.HealthChecker = frontProxyCA{}

// Name implements healthz.HealthChecker.
func (frontProxyCA) Name() string { return "front-proxy-ca" }

// Check implements healthz.HealthChecker.
func (f frontProxyCA) Check(_ *http.Request) error {
	if len(f.ca.CurrentCABundleContent()) == 0 {
		return fmt.Errorf("the front proxy's client CA (requestheader-client-ca-file) is not loaded yet")
	}
	return nil
}
