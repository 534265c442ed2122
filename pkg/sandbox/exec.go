package sandbox

import (
	"errors"
	"io"
	"strings"
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

// slot is where a binding's functions find the budget of the execution that
// holds the binding, and the execution of its set (for the shared
// templates' outputs; nil outside one).
type slot struct {
	b *Budget
	x *Execution
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

// executeIn runs the template within x: with its data, charging its budget.
func (e *executable) executeIn(w io.Writer, x *Execution) error {
	return e.run(w, x.data, x.budget, x)
}

func (e *executable) run(w io.Writer, data any, b *Budget, x *Execution) error {
	bd := e.pool.Get().(*binding)
	bd.slot.b, bd.slot.x = b, x
	err := bd.tmpl.Execute(w, data)
	bd.slot.b, bd.slot.x = nil, nil
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

// budgetLine returns the budget error in err and the line of the template
// parsed as tmplName where it happened ("" if unknown).
func budgetLine(err error, tmplName string) (*BudgetError, string, bool) {
	var be *BudgetError
	if !errors.As(err, &be) {
		return nil, "", false
	}
	var ee template.ExecError
	if !errors.As(err, &ee) {
		return be, "", true
	}
	// Templates defined in the file report positions in it, under its name.
	rest, ok := strings.CutPrefix(ee.Err.Error(), "template: "+tmplName+":")
	if !ok {
		return be, "", true
	}
	line, _, _ := strings.Cut(rest, ":")
	if !isDigits(line) {
		line = ""
	}
	return be, line, true
}
