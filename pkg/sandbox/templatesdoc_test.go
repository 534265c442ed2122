package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// templatesDoc is the documentation of the function set.
var templatesDoc = filepath.Join("..", "..", "docs", "templates.md")

// functionGroups is the list of functions in docs/templates.md, by how
// they are bounded.
func functionGroups() string {
	groups := []struct {
		title string
		names []string
	}{
		{"Called as they are: they return a number, a bool, a small fixed-size text or (part of) an argument, in time bounded by their arguments", nil},
		{"Text and lists whose size an argument chooses: checked before the call", nil},
		{"Reading their arguments whole (printing, serializing, comparing, copying): lists and dicts among them are measured first", nil},
		{"Producing text, lists or dicts: the result is charged", nil},
		{"text/template's printing builtins, replaced: arguments measured, printf's widths and precisions counted", nil},
	}
	for name, f := range templateFuncs {
		if strings.HasPrefix(name, "_") {
			continue
		}
		g := 3
		switch {
		case f.bound != nil:
			g = 4
		case f.limit == nil:
			g = 0
		case f.limit.deep:
			g = 2
		case f.limit.check != nil:
			g = 1
		}
		groups[g].names = append(groups[g].names, name)
	}
	var b strings.Builder
	for _, g := range groups {
		slices.Sort(g.names)
		b.WriteString("* " + g.title + ": `" + strings.Join(g.names, "`, `") + "`.\n")
	}
	return b.String()
}

// TestTemplatesDoc: docs/templates.md lists every function templates can call.
func TestTemplatesDoc(t *testing.T) {
	const begin, end = "<!-- begin functions -->\n", "<!-- end functions -->"
	doc := string(mustRead(t, templatesDoc))
	head, rest, ok1 := strings.Cut(doc, begin)
	_, tail, ok2 := strings.Cut(rest, end)
	if !ok1 || !ok2 {
		t.Fatalf("%s has no %q ... %q block", templatesDoc, begin, end)
	}
	want := head + begin + functionGroups() + end + tail
	if *update {
		if err := os.WriteFile(templatesDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc != want {
		t.Errorf("%s does not list the template functions as they are (run with -update)", templatesDoc)
	}
	for _, name := range removedFuncs {
		if !strings.Contains(head, "`"+name+"`") {
			t.Errorf("%s does not say that %s is removed", templatesDoc, name)
		}
	}
}
