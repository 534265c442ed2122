package apiserver

import (
	"errors"
	"net/http"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/tools/cache"
)

// informerSync reports ready only once every informer has synced: before that
// a LIST would answer from an empty cache, as if there were no MDs.
type informerSync struct {
	synced []cache.InformerSynced
}

var _ healthz.HealthChecker = &informerSync{}

func newInformerSyncCheck(synced ...cache.InformerSynced) healthz.HealthChecker {
	return &informerSync{synced: synced}
}

// Name implements healthz.HealthChecker.
func (i *informerSync) Name() string {
	return "informer-sync"
}

// Check implements healthz.HealthChecker.
func (i *informerSync) Check(_ *http.Request) error {
	for _, synced := range i.synced {
		if !synced() {
			return errors.New("informers of machinedeployments and operatingsystemprofiles not synced yet")
		}
	}
	return nil
}
