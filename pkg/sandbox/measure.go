package sandbox

import (
	"reflect"
)

// Sizes of what templates build, as estimated for the budget: a list element
// or dict entry costs its header besides the strings it holds.
const (
	elemSize  = 16
	entrySize = 48
)

// resultSize is what a value a function returned costs: its strings' bytes
// and its elements' headers, one level deep (nested lists and dicts were
// charged when they were made).
func resultSize(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len())
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() || v.Kind() == reflect.Pointer {
			return 0
		}
		return resultSize(v.Elem())
	case reflect.Slice, reflect.Array:
		n := v.Len()
		size := int64(n) * int64(v.Type().Elem().Size())
		for i := 0; i < n && canHoldString(v.Type().Elem()); i++ {
			size += stringLen(v.Index(i))
		}
		return size
	case reflect.Map:
		size := int64(v.Len()) * entrySize
		if canHoldString(v.Type().Key()) || canHoldString(v.Type().Elem()) {
			for it := v.MapRange(); it.Next(); {
				size += stringLen(it.Key()) + stringLen(it.Value())
			}
		}
		return size
	}
	return 0
}

func canHoldString(t reflect.Type) bool {
	return t.Kind() == reflect.String || t.Kind() == reflect.Interface
}

func stringLen(v reflect.Value) int64 {
	if v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() == reflect.String {
		return int64(v.Len())
	}
	return 0
}

// valueSize estimates how many bytes v takes printed or serialized, counting
// a value shared by several lists or dicts once per place it appears, with
// the indentation YAML would add. It stops counting past limit, and fails
// when lists, dicts and structs nest more than maxNesting deep (a dict set
// into itself nests forever).
func valueSize(v any, limit int64) (int64, error) {
	s := sizer{limit: limit}
	s.add(reflect.ValueOf(v), 0)
	return s.size, s.err
}

type sizer struct {
	limit, size int64
	err         error
}

func (s *sizer) add(v reflect.Value, depth int) {
	if s.err != nil || s.size > s.limit {
		return
	}
	switch v.Kind() {
	case reflect.Invalid:
		s.size += 5 // <nil>
	case reflect.String:
		s.size += int64(v.Len()) + 2
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			s.size += 5
			return
		}
		s.add(v.Elem(), depth)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			s.size += 4 * int64(v.Len()) // fmt prints bytes as [1 22 255]
			return
		}
		if s.nest(depth) {
			for i := 0; i < v.Len() && s.size <= s.limit; i++ {
				s.size += 2 + 4*int64(depth)
				s.add(v.Index(i), depth+1)
			}
		}
	case reflect.Map:
		if s.nest(depth) {
			for it := v.MapRange(); it.Next() && s.size <= s.limit; {
				s.size += 2 + 4*int64(depth)
				s.add(it.Key(), depth+1)
				s.add(it.Value(), depth+1)
			}
		}
	case reflect.Struct:
		if s.nest(depth) {
			for i := 0; i < v.NumField() && s.size <= s.limit; i++ {
				s.size += int64(len(v.Type().Field(i).Name)) + 2 + 4*int64(depth)
				s.add(v.Field(i), depth+1)
			}
		}
	default:
		s.size += 8 // numbers and bools, as most print
	}
}

// nest counts a list, dict or struct and reports whether to read into it.
func (s *sizer) nest(depth int) bool {
	s.size += 2
	if depth >= maxNesting {
		s.err = exceeded("lists, dicts and objects nested more than %d deep (a dict set into itself nests forever)", maxNesting)
		return false
	}
	return true
}
