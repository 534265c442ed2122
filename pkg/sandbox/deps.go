package sandbox

import (
	"slices"
	"strings"
	"text/template"
	"text/template/parse"
)

// A template's output is a function of the data fields it reads and the named
// templates it calls, unless it hands the whole data to something ({{ toYaml . }},
// {{ template "x" . }}) or calls a function that is not pure (now, rand…, env).
// deps finds that out once, at parse time, so an execution can reuse the
// output of an earlier one whose inputs were the same (memo.go).

// templateDeps is what a template's output depends on.
type templateDeps struct {
	pure   bool
	fields []int    // indexes into the schema's names, sorted
	named  []string // named templates called, sorted
}

// impureFuncs are sprig functions whose result depends on more than their
// arguments: time, randomness, the environment, the network, fresh keys.
var impureFuncs = []string{"now", "date", "ago", "epoch", "rand", "uuid", "shuffle", "env", "gen", "crypt", "passwd", "encrypt", "host", "duration", "call"}

func pureFunc(name string) bool {
	lower := strings.ToLower(name)
	for _, s := range impureFuncs {
		if strings.Contains(lower, s) {
			return false
		}
	}
	return true
}

// analyze finds the dependencies of t and of the templates defined with it,
// executed with data of schema s. Without a schema nothing is pure.
func analyze(t *template.Template, s *schema) templateDeps {
	a := &analysis{schema: s, pure: s != nil, fields: map[int]bool{}, named: map[string]bool{}}
	for _, tt := range t.Templates() {
		if tt.Tree == nil {
			continue
		}
		// Only the main template starts with the execution's data as dot.
		a.list(tt.Tree.Root, tt.Name() == t.Name())
	}
	d := templateDeps{pure: a.pure}
	for f := range a.fields {
		d.fields = append(d.fields, f)
	}
	for n := range a.named {
		d.named = append(d.named, n)
	}
	slices.Sort(d.fields)
	slices.Sort(d.named)
	return d
}

type analysis struct {
	schema *schema
	pure   bool
	fields map[int]bool
	named  map[string]bool
}

// field records a field read; names that are no field of the data are a
// sub-value's fields (with/range) or fail at execution either way.
func (a *analysis) field(name string) {
	if a.schema == nil {
		return
	}
	if i, ok := a.schema.index[name]; ok {
		a.fields[i] = true
	} else if a.schema.opaque[name] {
		a.pure = false // a method with arguments
	}
}

func (a *analysis) list(l *parse.ListNode, root bool) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.ActionNode:
			a.pipe(n.Pipe, root)
		case *parse.IfNode:
			a.pipe(n.Pipe, root)
			a.list(n.List, root)
			a.list(n.ElseList, root)
		case *parse.RangeNode:
			a.pipe(n.Pipe, root)
			a.list(n.List, false)
			a.list(n.ElseList, root)
		case *parse.WithNode:
			a.pipe(n.Pipe, root)
			a.list(n.List, false)
			a.list(n.ElseList, root)
		case *parse.TemplateNode:
			a.pipe(n.Pipe, root)
		case *parse.ListNode:
			a.list(n, root)
		}
	}
}

func (a *analysis) pipe(p *parse.PipeNode, root bool) {
	if p == nil {
		return
	}
	for _, cmd := range p.Cmds {
		if call, ok := namedCall(cmd); ok {
			a.named[call] = true
			continue
		}
		for _, arg := range cmd.Args {
			a.arg(arg, root)
		}
	}
}

func (a *analysis) arg(n parse.Node, root bool) {
	switch n := n.(type) {
	case *parse.DotNode:
		if root {
			a.pure = false // the whole data escapes
		}
	case *parse.FieldNode:
		a.field(n.Ident[0])
	case *parse.VariableNode:
		if n.Ident[0] == "$" {
			if len(n.Ident) == 1 {
				a.pure = false
				return
			}
			a.field(n.Ident[1])
		}
	case *parse.ChainNode:
		a.arg(n.Node, root)
		for _, f := range n.Field {
			a.field(f)
		}
	case *parse.IdentifierNode:
		if !pureFunc(n.Ident) {
			a.pure = false
		}
	case *parse.PipeNode:
		a.pipe(n, root)
	}
}

// namedCall recognizes the {{ _osmTemplate $ "name" }} calls rewrite.go makes.
func namedCall(cmd *parse.CommandNode) (string, bool) {
	if len(cmd.Args) != 3 {
		return "", false
	}
	fn, ok := cmd.Args[0].(*parse.IdentifierNode)
	if !ok || fn.Ident != namedTemplateFunc {
		return "", false
	}
	name, ok := cmd.Args[2].(*parse.StringNode)
	if !ok {
		return "", false
	}
	return name.Text, true
}
