package machinecontroller

import (
	"unique"

	"k8s.io/apimachinery/pkg/api/meta"
)

// internMax is the length above which a string is not interned: long values
// (certificates, JSON) are seldom repeated.
const internMax = 128

// intern returns the canonical copy of s, so that the many equal strings of
// cached objects share their bytes.
func intern(s string) string {
	if s == "" || len(s) > internMax {
		return s
	}
	return unique.Make(s).Value()
}

// internMap returns m with its keys and values interned.
func internMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[intern(k)] = intern(v)
	}
	return out
}

// InternMeta interns the namespace, label and annotation keys and values of a
// freshly decoded object that is about to be cached (an informer transform):
// keys such as osm.k8c.io/machine-deployment, values such as an MD's
// namespace and hash, which every object written for an MD repeats, are then
// held once. Tombstones and other non-objects pass unchanged.
func InternMeta(obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	m.SetNamespace(intern(m.GetNamespace()))
	m.SetLabels(internMap(m.GetLabels()))
	m.SetAnnotations(internMap(m.GetAnnotations()))
}
