package machinecontroller

import (
	"unique"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"
)

// internMax is the length above which a string is not interned: long values
// (certificates, JSON) are seldom repeated.
const internMax = 128

// intern returns the canonical copy of s, so that the many equal strings of
// cached objects share their bytes, and whether s was that copy already.
func intern(s string) (string, bool) {
	if s == "" || len(s) > internMax {
		return s, true
	}
	c := unique.Make(s).Value()
	return c, unsafe.StringData(c) == unsafe.StringData(s)
}

// internMap returns m with its keys and values interned, and whether they
// were already (m is then returned as it is).
func internMap(m map[string]string) (map[string]string, bool) {
	interned := true
	for k, v := range m {
		_, kc := intern(k)
		_, vc := intern(v)
		if !kc || !vc {
			interned = false
			break
		}
	}
	if interned {
		return m, true
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		k, _ = intern(k)
		v, _ = intern(v)
		out[k] = v
	}
	return out, false
}

// InternMeta interns the namespace, label and annotation keys and values of a
// freshly decoded object that is about to be cached (an informer transform):
// keys such as osm.k8c.io/machine-deployment, values such as an MD's
// namespace and hash, which every object written for an MD repeats, are then
// held once. An object interned already (a transform may see an object the
// cache holds, e.g. that of a deletion) is not written to: others read it.
// Tombstones and other non-objects pass unchanged.
func InternMeta(obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	if ns, ok := intern(m.GetNamespace()); !ok {
		m.SetNamespace(ns)
	}
	if labels, ok := internMap(m.GetLabels()); !ok {
		m.SetLabels(labels)
	}
	if annotations, ok := internMap(m.GetAnnotations()); !ok {
		m.SetAnnotations(annotations)
	}
}
