package sandbox

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"text/template/parse"
)

// Shared templates (Sources.Shared) are called without passing data
// ({{ template "name" }}) and still see the execution's data inside them, as
// in the engine the templates were first written for, which executed every
// shared template with the data first and pasted its output into each
// template as a literal `{{- define "name" }}\n<output>\n{{- end }}`. We keep
// that behaviour without parsing per execution: templates are parsed once,
// every {{ template "name" }} of a shared template is rewritten into
// {{ _osmTemplate $ "name" }}, and an execution runs each shared template
// once and hands the output to that call.
// One difference is deliberate: that engine parsed the pasted output again,
// so a "{{" that a shared template prints would be executed; here it stays
// text.

// rewriteNamedCalls replaces, in place, every template call to one of names.
func rewriteNamedCalls(list *parse.ListNode, names map[string]bool) {
	eachNode(list, func(node parse.Node) parse.Node {
		if t, ok := node.(*parse.TemplateNode); ok && names[t.Name] {
			return namedCallNode(t)
		}
		return node
	})
}

func namedCallNode(t *parse.TemplateNode) *parse.ActionNode {
	fn := parse.NewIdentifier(namedTemplateFunc).SetPos(t.Pos)
	root := &parse.VariableNode{NodeType: parse.NodeVariable, Pos: t.Pos, Ident: []string{"$"}}
	name := &parse.StringNode{NodeType: parse.NodeString, Pos: t.Pos, Quoted: strconv.Quote(t.Name), Text: t.Name}
	cmd := &parse.CommandNode{NodeType: parse.NodeCommand, Pos: t.Pos, Args: []parse.Node{fn, root, name}}
	pipe := &parse.PipeNode{NodeType: parse.NodePipe, Pos: t.Pos, Line: t.Line, Cmds: []*parse.CommandNode{cmd}}
	return &parse.ActionNode{NodeType: parse.NodeAction, Pos: t.Pos, Line: t.Line, Pipe: pipe}
}

// namedTemplate is the function, bound to the execution holding a binding,
// that returns the output of a shared template, executed for this
// execution, as the `define` wrapper would emit it: a leading newline and no
// trailing white space (nothing at all for an empty output).
func namedTemplate(s *slot) any {
	return func(root any, name string) (string, error) {
		x := s.x
		if x == nil || !isData(root, x.data) {
			return "", fmt.Errorf("template %q can only be called where $ is the render data", name)
		}
		out, ok := x.named[name]
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

// wrapNamedOutput shapes a shared template's output like the define wrapper: "\n" + output, with all trailing white space trimmed by `{{- end }}`.
func wrapNamedOutput(out string) string {
	return strings.TrimRight("\n"+out, " \t\r\n")
}
