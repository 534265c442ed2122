package render

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

// walkPipes calls f with the pipeline of every node of l.
func walkPipes(l *parse.ListNode, f func(*parse.PipeNode)) {
	if l == nil {
		return
	}
	for _, node := range l.Nodes {
		switch n := node.(type) {
		case *parse.ActionNode:
			f(n.Pipe)
		case *parse.TemplateNode:
			if n.Pipe != nil {
				f(n.Pipe)
			}
		case *parse.IfNode:
			walkBranchPipes(&n.BranchNode, f)
		case *parse.RangeNode:
			walkBranchPipes(&n.BranchNode, f)
		case *parse.WithNode:
			walkBranchPipes(&n.BranchNode, f)
		}
	}
}

func walkBranchPipes(n *parse.BranchNode, f func(*parse.PipeNode)) {
	f(n.Pipe)
	walkPipes(n.List, f)
	walkPipes(n.ElseList, f)
}

// walkTemplateCalls records the names {{ template }} calls in l.
func walkTemplateCalls(l *parse.ListNode, called map[string]bool) {
	if l == nil {
		return
	}
	for _, node := range l.Nodes {
		switch n := node.(type) {
		case *parse.TemplateNode:
			called[n.Name] = true
		case *parse.IfNode:
			walkTemplateCalls(n.List, called)
			walkTemplateCalls(n.ElseList, called)
		case *parse.RangeNode:
			walkTemplateCalls(n.List, called)
			walkTemplateCalls(n.ElseList, called)
		case *parse.WithNode:
			walkTemplateCalls(n.List, called)
			walkTemplateCalls(n.ElseList, called)
		case *parse.ListNode:
			walkTemplateCalls(n, called)
		}
	}
}

// calledFuncs lists the functions the templates of t call.
func calledFuncs(t *template.Template) []string {
	seen := map[string]bool{}
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			walkIdentifiers(tt.Root, seen)
		}
	}
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	return names
}

func walkIdentifiers(n parse.Node, seen map[string]bool) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n != nil {
			for _, c := range n.Nodes {
				walkIdentifiers(c, seen)
			}
		}
	case *parse.ActionNode:
		walkIdentifiers(n.Pipe, seen)
	case *parse.IfNode:
		walkBranch(&n.BranchNode, seen)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, seen)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, seen)
	case *parse.TemplateNode:
		walkIdentifiers(n.Pipe, seen)
	case *parse.PipeNode:
		if n != nil {
			for _, cmd := range n.Cmds {
				walkIdentifiers(cmd, seen)
			}
		}
	case *parse.CommandNode:
		for _, arg := range n.Args {
			walkIdentifiers(arg, seen)
		}
	case *parse.ChainNode:
		walkIdentifiers(n.Node, seen)
	case *parse.IdentifierNode:
		seen[n.Ident] = true
	}
}

func walkBranch(n *parse.BranchNode, seen map[string]bool) {
	walkIdentifiers(n.Pipe, seen)
	walkIdentifiers(n.List, seen)
	if n.ElseList != nil {
		walkIdentifiers(n.ElseList, seen)
	}
}
