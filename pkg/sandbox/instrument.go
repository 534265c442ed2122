package sandbox

import (
	"text/template"
	"text/template/parse"
)

// Templates are instrumented once, when a Set is compiled: nodes that call
// the budget's functions (exec.go binds them to the execution's budget) are
// added where a template can spend without bound.
//
//   - every action, if, with, range and template call is preceded by
//     {{ if _osmClock }}{{ end }}, which fails once the budget is out of
//     time: no sequence of actions runs on unchecked (maxArgs bounds what one
//     action can do);
//   - every range body starts with {{ if _osmIterate }}{{ end }}: iterations
//     over lists, dicts, integers, channels and iterators are counted alike;
//   - a template that {{ template }} calls starts with _osmEnter and ends
//     with _osmLeave, which count the call and its depth;
//   - an action that may print a list or dict, {{ $x }}, becomes
//     {{ $osm:print := $x }}{{ if _osmPrintable $osm:print }}{{ $osm:print }}{{ end }}:
//     fmt would build the whole text before the output buffer could refuse
//     it, and recurse forever into a dict set into itself;
//   - {{ $x := ... }} and {{ $x = ... }} are followed by
//     {{ if _osmKeep $x }}{{ end }}, which charges the text the variable
//     keeps (a method such as (now).Format makes text no function charged).
//
// The added nodes carry the position of the node they guard, so an error
// names its line. Their names cannot be written in a template.
const (
	fnClock     = "_osmClock"
	fnIterate   = "_osmIterate"
	fnEnter     = "_osmEnter"
	fnLeave     = "_osmLeave"
	fnPrintable = "_osmPrintable"
	fnKeep      = "_osmKeep"
	printVar    = "$osm:print"
)

// instrument rewrites the parse trees of t and its associated templates in place.
func instrument(t *template.Template) {
	called := map[string]bool{}
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			walkTemplateCalls(tt.Root, called)
		}
	}
	for _, tt := range t.Templates() {
		if tt.Tree == nil || tt.Root == nil {
			continue
		}
		// Only the main template starts with the execution's data as dot and $.
		main := tt.Name() == t.Name()
		root := tt.Root
		root.Nodes = instrumentList(root, scope{dotIsData: main, dollarIsData: main})
		if called[tt.Name()] {
			nodes := make([]parse.Node, 0, len(root.Nodes)+2)
			nodes = append(nodes, budgetCall(root.Pos, fnEnter))
			nodes = append(nodes, root.Nodes...)
			root.Nodes = append(nodes, budgetCall(root.Pos, fnLeave))
		}
	}
}

// scope says whether dot and $ are the execution's data, whose fields print
// safely (the caller's values, not ones a template built).
type scope struct{ dotIsData, dollarIsData bool }

func instrumentList(l *parse.ListNode, sc scope) []parse.Node {
	if l == nil {
		return nil
	}
	out := make([]parse.Node, 0, 2*len(l.Nodes))
	for _, node := range l.Nodes {
		switch node.(type) {
		case *parse.ActionNode, *parse.IfNode, *parse.WithNode, *parse.RangeNode, *parse.TemplateNode:
			out = append(out, budgetCall(node.Position(), fnClock))
		}
		switch n := node.(type) {
		case *parse.ActionNode:
			switch {
			case len(n.Pipe.Decl) > 0:
				out = append(out, n, budgetCall(n.Pos, fnKeep, n.Pipe.Decl...))
			case printsSafely(n.Pipe, sc):
				out = append(out, n)
			default:
				out = append(out, guardedPrint(n)...)
			}
		case *parse.IfNode:
			instrumentBranch(&n.BranchNode, sc, sc)
			out = append(out, n)
		case *parse.WithNode:
			instrumentBranch(&n.BranchNode, scope{dollarIsData: sc.dollarIsData}, sc)
			out = append(out, n)
		case *parse.RangeNode:
			body := instrumentList(n.List, scope{dollarIsData: sc.dollarIsData})
			n.List.Nodes = append([]parse.Node{budgetCall(n.Pos, fnIterate)}, body...)
			if n.ElseList != nil {
				n.ElseList.Nodes = instrumentList(n.ElseList, sc)
			}
			out = append(out, n)
		default:
			out = append(out, n)
		}
	}
	return out
}

// instrumentBranch instruments an if or with; body is the scope of its list.
func instrumentBranch(n *parse.BranchNode, body, outer scope) {
	nodes := instrumentList(n.List, body)
	if len(n.Pipe.Decl) > 0 {
		nodes = append([]parse.Node{budgetCall(n.Pos, fnKeep, n.Pipe.Decl...)}, nodes...)
	}
	n.List.Nodes = nodes
	if n.ElseList != nil {
		n.ElseList.Nodes = instrumentList(n.ElseList, outer)
	}
}

// printsSafely reports whether the value of p is certain to be a string,
// number or bool, or the data's own: the result of a function that returns
// one, a constant, or a field of the execution's data.
func printsSafely(p *parse.PipeNode, sc scope) bool {
	cmd := p.Cmds[len(p.Cmds)-1]
	switch n := cmd.Args[0].(type) {
	case *parse.IdentifierNode:
		return scalarFuncs[n.Ident]
	case *parse.StringNode, *parse.NumberNode, *parse.BoolNode, *parse.NilNode:
		return true
	case *parse.FieldNode, *parse.DotNode:
		return sc.dotIsData
	case *parse.VariableNode:
		return sc.dollarIsData && n.Ident[0] == "$" && len(n.Ident) > 1
	case *parse.PipeNode:
		return printsSafely(n, sc)
	}
	return false
}

func guardedPrint(a *parse.ActionNode) []parse.Node {
	v := variable(a.Pos, printVar)
	decl := &parse.ActionNode{NodeType: parse.NodeAction, Pos: a.Pos, Line: a.Line,
		Pipe: &parse.PipeNode{NodeType: parse.NodePipe, Pos: a.Pos, Line: a.Line, Decl: []*parse.VariableNode{v}, Cmds: a.Pipe.Cmds}}
	show := &parse.ActionNode{NodeType: parse.NodeAction, Pos: a.Pos, Line: a.Line, Pipe: pipe(a.Pos, a.Line, variable(a.Pos, printVar))}
	check := budgetCall(a.Pos, fnPrintable, v)
	check.List.Nodes = []parse.Node{show}
	return []parse.Node{decl, check}
}

// budgetCall is {{ if fn args... }}{{ end }}.
func budgetCall(pos parse.Pos, fn string, args ...*parse.VariableNode) *parse.IfNode {
	nodes := []parse.Node{parse.NewIdentifier(fn).SetPos(pos)}
	for _, a := range args {
		nodes = append(nodes, variable(pos, a.Ident[0]))
	}
	p := pipe(pos, 0, nodes...)
	return &parse.IfNode{BranchNode: parse.BranchNode{NodeType: parse.NodeIf, Pos: pos, Pipe: p,
		List: &parse.ListNode{NodeType: parse.NodeList, Pos: pos}}}
}

func pipe(pos parse.Pos, line int, args ...parse.Node) *parse.PipeNode {
	cmd := &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pos, Args: args}
	return &parse.PipeNode{NodeType: parse.NodePipe, Pos: pos, Line: line, Cmds: []*parse.CommandNode{cmd}}
}

func variable(pos parse.Pos, name string) *parse.VariableNode {
	return &parse.VariableNode{NodeType: parse.NodeVariable, Pos: pos, Ident: []string{name}}
}
