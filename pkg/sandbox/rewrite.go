package sandbox

import (
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

// wrapNamedOutput shapes a shared template's output like the define wrapper: "\n" + output, with all trailing white space trimmed by `{{- end }}`.
func wrapNamedOutput(out string) string {
	return strings.TrimRight("\n"+out, " \t\r\n")
}
