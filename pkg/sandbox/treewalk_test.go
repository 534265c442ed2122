package sandbox

import (
	"slices"
	"testing"
	"text/template"
	"text/template/parse"
)

// The walks reach every place an action can hide: branches, else branches,
// nested pipelines, chains and named templates; a missed function would be
// unbound at execution, a missed call left unrewritten.
func TestTreeWalks(t *testing.T) {
	const text = `{{ define "n" }}{{ lower "X" }}{{ end }}` +
		`{{ if eq 1 1 }}{{ template "n" }}{{ else }}{{ with (upper "a") }}{{ trim . }}{{ end }}{{ end }}` +
		`{{ range $i := until 2 }}{{ else }}{{ (list 1).x }}{{ end }}{{ (dict).y }}{{ first.z }}{{ template "n" (quote 1) }}`
	funcs := template.FuncMap{}
	for _, name := range []string{"lower", "upper", "trim", "until", "list", "dict", "quote", "first"} {
		funcs[name] = func(...any) any { return nil }
	}
	tmpl := template.Must(template.New("f").Funcs(funcs).Parse(text))

	got := calledFuncs(tmpl)
	slices.Sort(got)
	want := []string{"dict", "eq", "first", "list", "lower", "quote", "trim", "until", "upper"}
	if !slices.Equal(got, want) {
		t.Errorf("calledFuncs = %v, want %v", got, want)
	}

	root := tmpl.Lookup("f").Root
	var pipes int
	walkPipes(root, func(*parse.PipeNode) { pipes++ })
	// if, with, trim, range, (list 1).x, (dict).y, first.z, template "n" (quote 1);
	// {{ template "n" }} has none, and "n" is a tree of its own.
	if pipes != 8 {
		t.Errorf("walkPipes saw %d pipelines, want 8", pipes)
	}

	rewriteNamedCalls(root, map[string]bool{"n": true})
	called := map[string]bool{}
	walkTemplateCalls(root, called)
	if len(called) != 0 {
		t.Errorf("template calls left after the rewrite: %v", called)
	}
}
