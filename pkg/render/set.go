package render

import (
	"reflect"
	"text/template"
)

// source is the text of one template and the name it is parsed under.
type source struct {
	name string
	text string
}

// sources are the templates compiled together into a set.
type sources struct {
	// data is the type of the value the templates execute with.
	data reflect.Type
	// shared templates are executed first, once per execution, in the order
	// of their names; templates include one's output with {{ template "name" }}.
	shared map[string]string
	// templates are executed one at a time, by their index here.
	templates []source
}

// set is templates parsed, analyzed and instrumented once, executed many
// times. It is immutable once built and safe for concurrent executions;
// its memos are shared by them.
type set struct {
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

// compileSet parses the sources with the function set, finds what each
// template reads and instruments it for the budget. Its error is a
// *templateError naming the template.
func compileSet(src sources) (*set, error) {
	s := &set{schema: newSchema(src.data)}
	names := make(map[string]bool, len(src.shared))
	for _, name := range sortedKeys(src.shared) {
		t, err := s.compile(name, src.shared[name], nil)
		if err != nil {
			return nil, newTemplateError(name, true, err)
		}
		s.shared = append(s.shared, t)
		names[name] = true
	}
	for _, src := range src.templates {
		t, err := s.compile(src.name, src.text, names)
		if err != nil {
			return nil, newTemplateError(src.name, false, err)
		}
		s.templates = append(s.templates, t)
	}
	return s, nil
}

// compile parses one template; calls of the shared ones become calls of
// their outputs (rewrite.go).
func (s *set) compile(name, text string, shared map[string]bool) (setTemplate, error) {
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

// execution is one execution of a set: one data value, one budget, the
// shared templates' outputs. It is used by one goroutine.
type execution struct {
	set    *set
	data   any
	budget *budget
	keys   renderKeys
	named  map[string]string // the shared templates' outputs
}

// start executes the shared templates with data, charging b. Templates whose
// inputs match an earlier execution's reuse its output.
func (s *set) start(data any, b *budget) (*execution, error) {
	x := &execution{set: s, data: data, budget: b, keys: newRenderKeys(s.schema, data), named: make(map[string]string, len(s.shared))}
	x.keys.named = make(map[string]memoKey, len(s.shared))
	for i := range s.shared {
		t := &s.shared[i]
		key, memoized := x.keys.key(&t.deps)
		if memoized {
			x.keys.named[t.name] = key
			if out, ok := t.memo.Get(key); ok {
				x.named[t.name] = out
				continue
			}
		}
		out, err := x.run(t)
		if err != nil {
			return nil, newTemplateError(t.name, true, err)
		}
		out = wrapNamedOutput(out)
		x.named[t.name] = out
		if memoized {
			remember(t.memo, key, out)
		}
	}
	return x, nil
}

// execute executes the set's i-th template and charges its output to the
// budget.
func (x *execution) execute(i int) (string, error) {
	t := &x.set.templates[i]
	key, memoized := x.keys.key(&t.deps)
	out, hit := "", false
	if memoized {
		out, hit = t.memo.Get(key)
	}
	if !hit {
		var err error
		if out, err = x.run(t); err != nil {
			return "", newTemplateError(t.name, false, err)
		}
		if memoized {
			remember(t.memo, key, out)
		}
	}
	if err := x.budget.write(len(out)); err != nil {
		return "", &templateError{name: t.name, msg: err.Error(), err: err}
	}
	return out, nil
}

func (x *execution) run(t *setTemplate) (string, error) {
	buf := bufPool.Get().(*limitedBuffer)
	defer bufPool.Put(buf)
	buf.Reset()
	if err := t.exec.executeIn(buf, x); err != nil {
		return "", err
	}
	return buf.String(), nil
}
