package machinecontroller

import (
	"reflect"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestInternMeta(t *testing.T) {
	secret := func() *corev1.Secret {
		// Built from bytes, as a decoder builds them: equal, not shared.
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
			Namespace:   string([]byte("cloud-init-settings")),
			Labels:      map[string]string{string([]byte(ManagedByLabel)): string([]byte(ManagedByValue))},
			Annotations: map[string]string{string([]byte("long")): string(make([]byte, internMax+1))},
		}}
	}
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	// unique keeps a canonical copy only while a Handle of it lives: a garbage
	// collection between the two transforms makes a new one (equal, not
	// shared), so a pair is tried up to three times; three collections in a
	// row between two calls do not happen, an interning that never shares
	// fails every time.
	var a, b *corev1.Secret
	for range 3 {
		a, b = secret(), secret()
		for _, s := range []*corev1.Secret{a, b} {
			if _, err := StripManagedFields(s); err != nil {
				t.Fatal(err)
			}
		}
		if same(a.Namespace, b.Namespace) && same(a.Labels[ManagedByLabel], b.Labels[ManagedByLabel]) {
			break
		}
	}
	if !same(a.Namespace, b.Namespace) || !same(a.Labels[ManagedByLabel], b.Labels[ManagedByLabel]) {
		t.Error("equal namespaces or label values not shared")
	}
	if a.Labels[ManagedByLabel] != ManagedByValue || len(a.Annotations["long"]) != internMax+1 {
		t.Errorf("labels %v, annotation of %d bytes", a.Labels, len(a.Annotations["long"]))
	}
	if same(a.Annotations["long"], b.Annotations["long"]) {
		t.Error("a long value was interned")
	}
	// Tombstones pass.
	if _, err := StripManagedFields("not an object"); err != nil {
		t.Error(err)
	}
}

// An object interned already is not written to (readers share it).
func TestInternMetaTwiceDoesNotWrite(t *testing.T) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: string([]byte("ns")), Labels: map[string]string{string([]byte("k")): string([]byte("v"))}}}
	InternMeta(s)
	labels := s.Labels
	InternMeta(s)
	if reflect.ValueOf(s.Labels).UnsafePointer() != reflect.ValueOf(labels).UnsafePointer() {
		t.Error("the labels of an interned object were replaced")
	}
}
