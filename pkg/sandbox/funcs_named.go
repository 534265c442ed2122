package sandbox

import (
	"fmt"
	"reflect"
)

// namedTemplateFunc is the function that {{ template "name" }} actions of
// templates are rewritten to call (see rewrite.go). The leading underscore
// keeps it out of the way of sprig and of anything a template could call by
// accident.
const namedTemplateFunc = "_osmTemplate"

// namedTemplate is the function, bound to the execution holding a binding,
// that returns the output of a shared template, executed for this
// execution, as the `define` wrapper would emit it: a leading newline and no
// trailing white space (nothing at all for an empty output).
func namedTemplate(s *slot) any {
	return func(root any, name string) (string, error) {
		if s.named == nil || !isData(root, s.data) {
			return "", fmt.Errorf("template %q can only be called where $ is the render data", name)
		}
		out, ok := s.named[name]
		if !ok {
			return "", fmt.Errorf("no such template %q", name)
		}
		return out, nil
	}
}

// unboundNamedTemplate is namedTemplate for the parser, which needs its
// signature; executions call the bound one.
func unboundNamedTemplate(_ any, name string) (string, error) {
	return "", fmt.Errorf("template %q called outside an execution", name)
}

// isData reports whether v is data itself (a pointer to it, or an equal value).
func isData(v, data any) bool {
	if v == nil || data == nil {
		return v == nil && data == nil
	}
	a, b := reflect.ValueOf(v), reflect.ValueOf(data)
	return a.Type() == b.Type() && a.Comparable() && a.Equal(b)
}
