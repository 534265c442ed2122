package sandbox

import (
	"fmt"
	"text/template"
	"text/template/parse"
)

// Walks over parse trees, done once when a revision is parsed.

// maxArgs bounds the arguments of one action, in all its commands: the
// clock is checked between actions, and a builtin such as eq compares texts
// of megabytes in one call.
const maxArgs = 256

// checkArgs fails for an action of t with more than maxArgs arguments.
func checkArgs(t *template.Template) error {
	for _, tt := range t.Templates() {
		if tt.Tree == nil {
			continue
		}
		var err error
		walkPipes(tt.Root, func(p *parse.PipeNode) {
			if err == nil && countArgs(p) > maxArgs {
				location, _ := tt.ErrorContext(p)
				err = fmt.Errorf("template: %s: an action with more than %d arguments", location, maxArgs)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func countArgs(p *parse.PipeNode) int {
	n := 0
	for _, cmd := range p.Cmds {
		for _, arg := range cmd.Args {
			n++
			switch a := arg.(type) {
			case *parse.PipeNode:
				n += countArgs(a)
			case *parse.ChainNode:
				if inner, ok := a.Node.(*parse.PipeNode); ok {
					n += countArgs(inner)
				}
			}
		}
	}
	return n
}

// eachNode calls f with every node of l and of the lists nested in it (the
// branches of if, range and with), parents before their branches; the node
// f returns replaces the one it was given.
func eachNode(l *parse.ListNode, f func(parse.Node) parse.Node) {
	if l == nil {
		return
	}
	for i := range l.Nodes {
		l.Nodes[i] = f(l.Nodes[i])
		switch n := l.Nodes[i].(type) {
		case *parse.ListNode:
			eachNode(n, f)
		case *parse.IfNode:
			eachNode(n.List, f)
			eachNode(n.ElseList, f)
		case *parse.RangeNode:
			eachNode(n.List, f)
			eachNode(n.ElseList, f)
		case *parse.WithNode:
			eachNode(n.List, f)
			eachNode(n.ElseList, f)
		}
	}
}

// walkPipes calls f with the pipeline of every node of l.
func walkPipes(l *parse.ListNode, f func(*parse.PipeNode)) {
	eachNode(l, func(node parse.Node) parse.Node {
		var p *parse.PipeNode
		switch n := node.(type) {
		case *parse.ActionNode:
			p = n.Pipe
		case *parse.TemplateNode:
			p = n.Pipe
		case *parse.IfNode:
			p = n.Pipe
		case *parse.RangeNode:
			p = n.Pipe
		case *parse.WithNode:
			p = n.Pipe
		}
		if p != nil {
			f(p)
		}
		return node
	})
}

// walkTemplateCalls records the names {{ template }} calls in l.
func walkTemplateCalls(l *parse.ListNode, called map[string]bool) {
	eachNode(l, func(node parse.Node) parse.Node {
		if t, ok := node.(*parse.TemplateNode); ok {
			called[t.Name] = true
		}
		return node
	})
}

// calledFuncs lists the functions the templates of t call.
func calledFuncs(t *template.Template) []string {
	seen := map[string]bool{}
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			walkPipes(tt.Root, func(p *parse.PipeNode) { pipeIdentifiers(p, seen) })
		}
	}
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	return names
}

// pipeIdentifiers records the functions p calls, in nested pipelines and
// chains ((fn).Field, fn.Field) too.
func pipeIdentifiers(p *parse.PipeNode, seen map[string]bool) {
	for _, cmd := range p.Cmds {
		for _, arg := range cmd.Args {
			argIdentifiers(arg, seen)
		}
	}
}

func argIdentifiers(arg parse.Node, seen map[string]bool) {
	switch a := arg.(type) {
	case *parse.IdentifierNode:
		seen[a.Ident] = true
	case *parse.PipeNode:
		pipeIdentifiers(a, seen)
	case *parse.ChainNode:
		argIdentifiers(a.Node, seen)
	}
}
