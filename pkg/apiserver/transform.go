package apiserver

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// leanCache makes informer caches drop what nothing here reads: managed fields
// are often as big as the object itself. Annotations stay, they feed renders.
func leanCache(informers ...cache.SharedIndexInformer) error {
	for _, i := range informers {
		if err := i.SetTransform(stripManagedFields); err != nil {
			return err
		}
	}
	return nil
}

func stripManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	// Tombstones and other non-objects pass unchanged.
	return obj, nil
}
