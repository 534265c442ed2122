package sandbox

import (
	"io"
	"sync"
	"text/template"
)

// executable is a parsed and instrumented template set. It is never executed
// itself: every execution takes a binding, a template set sharing its parse
// trees whose functions charge that execution's budget. Bindings are pooled,
// so an execution neither clones nor parses.
type executable struct {
	parsed *template.Template
	funcs  []string // the functions its templates call
	pool   sync.Pool
}

type binding struct {
	tmpl *template.Template
	slot *slot
}

// newExecutable instruments t (see instrument.go) and prepares its bindings.
func newExecutable(t *template.Template) (*executable, error) {
	if err := checkArgs(t); err != nil {
		return nil, err
	}
	instrument(t)
	e := &executable{parsed: t, funcs: calledFuncs(t)}
	e.pool.New = func() any { return e.bind() }
	return e, nil
}

func (e *executable) bind() *binding {
	s := &slot{}
	funcs := make(template.FuncMap, len(e.funcs)+len(budgetFuncs))
	for _, name := range e.funcs {
		if f, ok := templateFuncs[name]; ok {
			funcs[name] = f.bind(name, s)
		}
	}
	for name, f := range budgetFuncs {
		funcs[name] = f(s)
	}
	t := template.New(e.parsed.Name()).Funcs(funcs)
	for _, tt := range e.parsed.Templates() {
		if tt.Tree != nil {
			// Cannot fail: the trees were parsed together and t has no others.
			_, _ = t.AddParseTree(tt.Name(), tt.Tree)
		}
	}
	return &binding{tmpl: t, slot: s}
}

// run executes the template with data, charging b; named are the outputs of
// the shared templates of its set.
func (e *executable) run(w io.Writer, data any, b *Budget, named map[string]string) error {
	bd := e.pool.Get().(*binding)
	bd.slot.b, bd.slot.data, bd.slot.named = b, data, named
	err := bd.tmpl.Execute(w, data)
	bd.slot.b, bd.slot.data, bd.slot.named = nil, nil, nil
	e.pool.Put(bd)
	return err
}

// budgetFuncs are the functions instrument.go adds to templates.
var budgetFuncs = map[string]func(s *slot) any{
	fnClock:   func(s *slot) any { return func() (bool, error) { return false, s.b.clock() } },
	fnIterate: func(s *slot) any { return func() (bool, error) { return false, s.b.iterate() } },
	fnEnter:   func(s *slot) any { return func() (bool, error) { return false, s.b.enter() } },
	fnLeave:   func(s *slot) any { return func() bool { s.b.leave(); return false } },
	fnPrintable: func(s *slot) any {
		return func(v any) (bool, error) {
			switch v.(type) {
			case nil, string, bool, int, int64, float64:
				return true, nil
			}
			if err := s.b.clock(); err != nil {
				return false, err
			}
			n, err := valueSize(v, maxOutput)
			if err == nil && n > maxOutput {
				err = exceeded("printing a value of more than %s", sizeString(maxOutput))
			}
			return err == nil, err
		}
	},
	fnKeep: func(s *slot) any {
		return func(vs ...any) (bool, error) {
			for _, v := range vs {
				if str, ok := v.(string); ok {
					if err := s.b.produce("a variable", int64(len(str))); err != nil {
						return false, err
					}
				}
			}
			return false, nil
		}
	},
}
