package sandbox

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"reflect"
	"slices"

	"github.com/osm-apiserver/osm-apiserver/pkg/lru"
)

// Most of an execution repeats an earlier one: the data of a set's
// executions differ in a few fields, and a template that reads none of those
// gives the same text. Each pure template (deps.go) keeps its recent outputs
// keyed by a 128-bit hash of the values it reads.

// memoSize bounds the outputs kept per template.
const memoSize = 128

type memoKey [2]uint64

type memo = lru.Cache[memoKey, string]

func newMemo() *memo {
	return lru.New[memoKey, string](memoSize)
}

// maxMemoized bounds the outputs kept: configuration files are a few KiB,
// and a template's author must not fill the server's memory with outputs
// kept for every execution.
const maxMemoized = 64 << 10

// remember keeps out as the output for key unless it is too large.
func remember(m *memo, key memoKey, out string) {
	if len(out) <= maxMemoized {
		m.Add(key, out)
	}
}

var memoSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// dualHash feeds the same bytes to two independently seeded hashes.
type dualHash struct{ a, b maphash.Hash }

func newDualHash() *dualHash {
	h := &dualHash{}
	h.a.SetSeed(memoSeeds[0])
	h.b.SetSeed(memoSeeds[1])
	return h
}

func (h *dualHash) sum() memoKey { return memoKey{h.a.Sum64(), h.b.Sum64()} }

func (h *dualHash) uint(v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	h.a.Write(b[:])
	h.b.Write(b[:])
}

func (h *dualHash) str(s string) {
	h.uint(uint64(len(s)))
	h.a.WriteString(s)
	h.b.WriteString(s)
}

// value hashes v so that only values a template cannot tell apart hash alike:
// nil and non-nil pointers differ, maps are hashed in key order. It reports
// false for kinds it does not know, which leaves the template unmemoized.
func (h *dualHash) value(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		h.str(v.String())
	case reflect.Bool:
		if v.Bool() {
			h.uint(1)
		} else {
			h.uint(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		h.uint(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		h.uint(v.Uint())
	case reflect.Float32, reflect.Float64:
		h.uint(math.Float64bits(v.Float()))
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			h.uint(0)
			return true
		}
		h.uint(1)
		return h.value(v.Elem())
	case reflect.Slice:
		if v.IsNil() {
			h.uint(math.MaxUint64)
			return true
		}
		fallthrough
	case reflect.Array:
		h.uint(uint64(v.Len()))
		for i := 0; i < v.Len(); i++ {
			if !h.value(v.Index(i)) {
				return false
			}
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return false
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(x, y reflect.Value) int {
			if x.String() < y.String() {
				return -1
			}
			return 1
		})
		h.uint(uint64(len(keys)))
		for _, k := range keys {
			h.str(k.String())
			if !h.value(v.MapIndex(k)) {
				return false
			}
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !h.value(v.Field(i)) {
				return false
			}
		}
	default:
		return false
	}
	return true
}

// field adds what data (of schema s's type) holds as s.names[i] to h; false
// if it cannot: a value of a kind h does not know, or a method that failed.
func (h *dualHash) field(s *schema, data reflect.Value, i int) bool {
	if i < len(s.field) {
		return h.value(data.Elem().Field(s.field[i]))
	}
	out := data.Method(s.method[i-len(s.field)]).Call(nil)
	if len(out) == 2 && !out[1].IsNil() {
		return false
	}
	return h.value(out[0])
}

// renderKeys computes, once per execution, the hash of each field its
// templates read.
type renderKeys struct {
	schema *schema // nil: nothing is memoized
	v      reflect.Value
	done   []bool
	ok     []bool
	fields []memoKey
	named  map[string]memoKey
}

// newRenderKeys returns the keys of data, which templates of schema s read.
func newRenderKeys(s *schema, data any) renderKeys {
	v := reflect.ValueOf(data)
	if s == nil || !v.IsValid() || v.Type() != s.typ || v.IsNil() {
		return renderKeys{}
	}
	return renderKeys{
		schema: s,
		v:      v,
		done:   make([]bool, len(s.names)),
		ok:     make([]bool, len(s.names)),
		fields: make([]memoKey, len(s.names)),
	}
}

func (r *renderKeys) field(i int) (memoKey, bool) {
	if !r.done[i] {
		r.done[i] = true
		h := newDualHash()
		r.ok[i] = h.field(r.schema, r.v, i)
		r.fields[i] = h.sum()
	}
	return r.fields[i], r.ok[i]
}

// key is the memo key of a template with deps, false if it has none.
func (r *renderKeys) key(d *templateDeps) (memoKey, bool) {
	if !d.pure || r.schema == nil {
		return memoKey{}, false
	}
	h := newDualHash()
	for _, i := range d.fields {
		k, ok := r.field(i)
		if !ok {
			return memoKey{}, false
		}
		h.uint(uint64(i))
		h.uint(k[0])
		h.uint(k[1])
	}
	for _, name := range d.named {
		k, ok := r.named[name]
		if !ok {
			return memoKey{}, false
		}
		h.str(name)
		h.uint(k[0])
		h.uint(k[1])
	}
	return h.sum(), true
}
