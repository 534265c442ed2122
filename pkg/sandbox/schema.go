package sandbox

import (
	"reflect"
)

// schema is what templates can read of the data they execute with, for the
// dependency analysis (deps.go) and the memo keys (memo.go): of a pointer to
// a struct, its exported fields, promoted ones included, and its exported
// methods, in that order. A template's output is a function of the values of
// those it reads, unless it calls a method with arguments, which the schema
// marks opaque. Data of any other type has no schema: nothing of it is
// memoized.
type schema struct {
	typ    reflect.Type   // the pointer type
	names  []string       // what templates read, by index
	index  map[string]int // name -> index in names
	field  []int          // names[i], i < len(field): the struct field holding it
	method []int          // names[len(field)+j]: the method
	opaque map[string]bool
}

// newSchema returns the schema of data of type t, nil if t is no pointer to
// a struct.
func newSchema(t reflect.Type) *schema {
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	s := &schema{typ: t, index: map[string]int{}, opaque: map[string]bool{}}
	for _, f := range reflect.VisibleFields(t.Elem()) {
		if f.IsExported() {
			s.add(f.Name)
			// A promoted field is read with the whole embedded struct.
			s.field = append(s.field, f.Index[0])
		}
	}
	for i := 0; i < t.NumMethod(); i++ {
		m := t.Method(i)
		ft := m.Type // with the receiver
		if ft.NumIn() == 1 && (ft.NumOut() == 1 || ft.NumOut() == 2 && ft.Out(1) == errorType) {
			s.add(m.Name)
			s.method = append(s.method, i)
		} else {
			s.opaque[m.Name] = true
		}
	}
	return s
}

func (s *schema) add(name string) {
	s.index[name] = len(s.names)
	s.names = append(s.names, name)
}
