package sandbox

import (
	"bytes"
	"strings"
	"testing"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

// referenceFuncs are the functions templates had before the budget: sprig's,
// with the conversions and the cached semverCompare of our own.
func referenceFuncs() template.FuncMap {
	m := sprig.TxtFuncMap()
	for _, name := range []string{"toToml", "fromToml", "toYaml", "fromYaml", "fromYamlArray", "toJson", "fromJson", "fromJsonArray", "semverCompare"} {
		m[name] = funcMap[name]
	}
	return m
}

// TestBudgetKeepsOutputs executes templates as they were executed before the
// budget (plain text/template, sprig) and as the renderer does (instrumented,
// bound functions): within the budget, outputs are the same.
func TestBudgetKeepsOutputs(t *testing.T) {
	data := map[string]any{
		"m":    map[string]any{"a": 1, "b": map[string]any{"c": []any{"x", 2}}},
		"list": []any{"one", 2, 3.5, nil},
		"n":    7,
		"s":    "text",
	}
	for _, text := range []string{
		// Printing: missing values, nil, lists and dicts, variables, dot.
		`{{ .missing }}|{{ $x := .missing }}{{ $x }}|{{ .m.b.nope }}|{{ index .list 3 }}|{{ .list }}|{{ .m }}`,
		`{{ range $k, $v := .m }}{{ $k }}={{ $v }},{{ end }}{{ with .m.b }}{{ . }}{{ .c }}{{ end }}{{ with .missing }}x{{ else }}{{ . | len }}{{ end }}`,
		`{{ $d := dict "k" (list 1 "a") }}{{ $_ := set $d "l" (dict) }}{{ $d }}{{ $x := 1 }}{{ $x = 2 }}{{ $x }}`,
		`{{ if $v := .n }}{{ $v }}{{ end }}{{ with $v := .m.a }}{{ $v }}{{ end }}{{ range $i, $e := .list }}{{ $i }}{{ $e }}{{ end }}`,
		// Loops and templates.
		`{{ range 3 }}{{ . }}{{ end }}{{ range $i, $e := .list }}{{ if eq $i 1 }}{{ continue }}{{ end }}{{ if eq $i 3 }}{{ break }}{{ end }}{{ $e }}{{ end }}{{ range .none }}x{{ else }}empty{{ end }}`,
		`{{ define "x" }}[{{ . }}]{{ end }}{{ template "x" .list }}{{ template "x" 5 }}{{ block "b" . }}{{ .n }}{{ end }}`,
		`{{ define "r" }}{{ if lt . 5 }}{{ . }}{{ template "r" (add1 .) }}{{ end }}{{ end }}{{ template "r" 0 }}`,
		// Printing builtins.
		`{{ printf "%05d|%q|%v|%x|%-4s|%.2f" 42 "x" .m "hi" "a" 3.14159 }}{{ print 1 2 "a" .list }}{{ println "a" 1 }}`,
		`{{ html "<a href='x'>" }}{{ js "'\"<" }}{{ urlquery "a b&c" }}{{ printf "%*d" 5 1 }}`,
		// Text.
		`{{ repeat 3 "ab" }}{{ indent 2 "a\nb" }}{{ nindent 2 "a" }}{{ replace "a" "bb" "banana" }}{{ replace "" "-" "ab" }}`,
		`{{ wrapWith 3 "|" "abcdefg hij" }}{{ wrap 3 "abc def ghi" }}{{ seq 1 3 }}{{ seq 5 -1 1 }}{{ seq 3 }}{{ seq 2 4 }}`,
		`{{ until 3 }}{{ until -2 }}{{ untilStep 0 10 3 }}{{ untilStep 10 0 -4 }}{{ splitList "," "a,b" }}{{ split "," "a,b" }}{{ splitn "," 2 "a,b,c" }}`,
		`{{ join "," (list 1 "a" 2.5) }}{{ join "-" "x" }}{{ sortAlpha (list "b" "a" 3) }}{{ toStrings (list 1 (list 2)) }}{{ quote "a" 1 }}{{ squote .n }}{{ cat "a" (list 1) .m }}`,
		`{{ upper "a" }}{{ trunc 2 "abc" }}{{ b64enc "x" }}{{ abbrev 5 "abcdefgh" }}{{ title "a b" }}{{ snakecase "AbCd" }}{{ toString .list }}`,
		// Regular expressions.
		`{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "${1}W" }}{{ regexReplaceAll "" "abc" "-" }}{{ regexReplaceAllLiteral "a" "banana" "$1" }}`,
		`{{ regexFindAll "[0-9]+" "a1b22c333" -1 }}{{ regexFindAll "[0-9]+" "a1b22c333" 2 }}{{ regexSplit "," "a,b,c" -1 }}{{ regexSplit "," "a,b,c" 2 }}`,
		`{{ regexMatch "^a" "abc" }}{{ regexFind "b+" "abbbc" }}{{ regexQuoteMeta "a.b" }}{{ regexFindAll "x*" "axxb" -1 }}`,
		// Lists and dicts.
		`{{ uniq (list 1 1 "a" "a" (list 1) (list 1) 2.5 2.5 nil nil (dict "a" 1) (dict "a" 1)) }}{{ uniq (list) }}`,
		`{{ keys (dict "a" 1) }}{{ concat (list 1) (list 2 3) }}{{ chunk 2 (list 1 2 3) }}{{ merge (dict "a" 1) (dict "b" 2 "a" 3) }}{{ mergeOverwrite (dict "a" 1) (dict "a" 3) }}`,
		`{{ deepCopy .m }}{{ has 1 (list 1) }}{{ without (list 1 2 1) 1 }}{{ append .list 5 }}{{ prepend .list 0 }}{{ rest .list }}{{ initial .list }}{{ reverse .list }}{{ compact .list }}`,
		`{{ pick .m "a" }}{{ omit .m "a" }}{{ values (dict "a" 1) }}{{ pluck "a" (dict "a" 1) (dict "a" 2) }}{{ dig "b" "c" "none" .m }}{{ first .list }}{{ last .list }}{{ slice .list 1 2 }}`,
		// Conversions and versions.
		`{{ toJson .m }}{{ toPrettyJson .m }}{{ toRawJson .list }}{{ toYaml .m }}{{ fromJson "{\"a\":[1]}" }}{{ fromYaml "a: [1]" }}{{ fromYamlArray "[1, a]" }}{{ toToml (dict "a" 1) }}`,
		`{{ semver "1.2.3-rc.1" }}{{ (semver "1.2.3").Major }}{{ semverCompare ">=1.2" "1.3.0" }}{{ default "d" .missing }}{{ .n | add 1 }}{{ len .list }}{{ deepEqual .m .m }}`,
	} {
		ref, err := template.New("t").Funcs(referenceFuncs()).Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		var want bytes.Buffer
		if err := ref.Execute(&want, data); err != nil {
			t.Fatalf("%s: reference: %v", text, err)
		}
		parsed, err := template.New("t").Funcs(funcMap).Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		var got bytes.Buffer
		if err := mustExecutable(t, parsed).execute(&got, data, newBudget()); err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		if got.String() != want.String() {
			t.Errorf("%s:\n got %q\nwant %q", text, got.String(), want.String())
		}
	}
}

// TestRemovedFunctions: templates cannot read the server's environment,
// files or network, nor generate keys (issue 9, item 3).
func TestRemovedFunctions(t *testing.T) {
	for _, name := range removedFuncs {
		_, err := template.New("t").Funcs(funcMap).Parse("{{ " + name + " }}")
		if err == nil || !strings.Contains(err.Error(), `function "`+name+`" not defined`) {
			t.Errorf("%s: parse error %v, want not defined", name, err)
		}
	}
	for _, text := range []string{`{{ dateInZone "2006" 0 "Local" }}`, `{{ htmlDateInZone 0 "Europe/Berlin" }}`} {
		parsed := template.Must(template.New("t").Funcs(funcMap).Parse(text))
		if err := mustExecutable(t, parsed).execute(&bytes.Buffer{}, nil, newBudget()); err == nil || !strings.Contains(err.Error(), "UTC only") {
			t.Errorf("%s: %v, want UTC only", text, err)
		}
	}
	parsed := template.Must(template.New("t").Funcs(funcMap).Parse(`{{ date "2006-01-02 15:04 MST" 86400 }}|{{ dateInZone "15:04" 0 "UTC" }}|{{ (toDate "2006-01-02" "2024-05-01").Location }}`))
	var out bytes.Buffer
	if err := mustExecutable(t, parsed).execute(&out, nil, newBudget()); err != nil || out.String() != "1970-01-02 00:00 UTC|00:00|UTC" {
		t.Errorf("dates: %q, %v; want UTC", out.String(), err)
	}
}

func mustExecutable(t *testing.T, parsed *template.Template) *executable {
	t.Helper()
	e, err := newExecutable(parsed)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
