package sandbox

import (
	"maps"
	"reflect"
	"slices"
	"text/template"
)

// Source is the text of one template and the name it is parsed under, which
// its errors carry.
type Source struct {
	Name string
	Text string
}

// Sources are the templates compiled together into a Set.
type Sources struct {
	// Data is the type of the value the templates execute with. For a
	// pointer to a struct, a template's outputs are kept and reused by the
	// fields it reads (see Set); for other types (or nil) nothing is kept.
	Data reflect.Type
	// Shared templates, by name, are executed first, once per Execution and
	// in the order of their names; Templates include one's output with
	// {{ template "name" }}. A shared template cannot call another.
	Shared map[string]string
	// Templates are executed one at a time, by their index here. Two may
	// have the same name.
	Templates []Source
}

// Set is templates parsed, analyzed and instrumented once, executed many
// times. Each template keeps its recent outputs, by a hash of the fields of
// the data it reads (when it reads nothing else: not the data as a whole,
// nor functions such as now or randAlpha), so an execution whose data a
// template cannot tell apart from an earlier one's reuses that output. A Set
// is immutable once built and safe for concurrent executions.
type Set struct {
	schema    *schema
	shared    []setTemplate
	templates []setTemplate
}

type setTemplate struct {
	name string
	exec *executable
	deps templateDeps
	memo *memo
}

// Compile parses the sources with the function set, finds what each
// template reads and instruments it for the budget. Its error is an *Error
// naming the template.
func Compile(src Sources) (*Set, error) {
	s := &Set{schema: newSchema(src.Data)}
	names := make(map[string]bool, len(src.Shared))
	for _, name := range slices.Sorted(maps.Keys(src.Shared)) {
		t, err := s.compile(name, src.Shared[name], nil)
		if err != nil {
			return nil, newError(name, true, err)
		}
		s.shared = append(s.shared, t)
		names[name] = true
	}
	for _, src := range src.Templates {
		t, err := s.compile(src.Name, src.Text, names)
		if err != nil {
			return nil, newError(src.Name, false, err)
		}
		s.templates = append(s.templates, t)
	}
	return s, nil
}

// compile parses one template; calls of the shared ones become calls of
// their outputs (rewrite.go).
func (s *Set) compile(name, text string, shared map[string]bool) (setTemplate, error) {
	t, err := template.New(name).Funcs(funcMap).Parse(text)
	if err != nil {
		return setTemplate{}, err
	}
	if shared != nil {
		for _, tt := range t.Templates() {
			if tt.Tree != nil {
				rewriteNamedCalls(tt.Tree.Root, shared)
			}
		}
	}
	// Analyzed before it is instrumented, which rewrites its trees.
	deps := analyze(t, s.schema)
	exec, err := newExecutable(t)
	if err != nil {
		return setTemplate{}, err
	}
	return setTemplate{name: name, exec: exec, deps: deps, memo: newMemo()}, nil
}

// Reads says whether one of the set's templates names the data field or
// method name (a template that hands the whole data to a function is not
// counted: it names nothing). The set must have been compiled with a Data
// type that is a pointer to a struct.
func (s *Set) Reads(name string) bool {
	if s.schema == nil {
		return false
	}
	i, ok := s.schema.index[name]
	if !ok {
		return false
	}
	for _, t := range slices.Concat(s.shared, s.templates) {
		if slices.Contains(t.deps.fields, i) {
			return true
		}
	}
	return false
}
