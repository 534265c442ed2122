package sandbox

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

type setData struct {
	Name  string
	Proxy *string
	Items []string
}

func compileTest(t *testing.T, shared map[string]string, texts ...string) *Set {
	t.Helper()
	src := Sources{Data: reflect.TypeFor[*setData](), Shared: shared}
	for _, text := range texts {
		src.Templates = append(src.Templates, Source{Name: "/etc/t", Text: text})
	}
	s, err := Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func executeAll(t *testing.T, s *Set, data any, b *Budget) []string {
	t.Helper()
	x, err := s.Start(data, b)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(s.templates))
	for i := range out {
		if out[i], err = x.Execute(i); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestSharedTemplates: a shared template runs once per execution with the
// data, and every call of it prints its output; templates may share a name.
func TestSharedTemplates(t *testing.T) {
	proxy := "http://proxy"
	s := compileTest(t, map[string]string{"proxy": "{{ with .Proxy }}{{ . }}{{ end }}  \n", "empty": ""},
		`a{{ template "proxy" }}|{{ template "proxy" }}|{{ template "empty" }}|{{ .Name }}`,
		`{{ define "local" }}[{{ . }}]{{ end }}{{ template "local" .Name }}`)
	got := executeAll(t, s, &setData{Name: "n", Proxy: &proxy}, newBudget())
	want := []string{"a\nhttp://proxy|\nhttp://proxy||n", "[n]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	got = executeAll(t, s, &setData{Name: "m"}, newBudget())
	if want := []string{"a|||m", "[m]"}; !reflect.DeepEqual(got, want) {
		t.Errorf("without a proxy: got %q, want %q", got, want)
	}
}

// TestMemo: outputs are kept by the fields a template reads, never for data
// that is no pointer to a struct, nor for templates that read more.
func TestMemo(t *testing.T) {
	s := compileTest(t, nil, `{{ .Name }}`, `{{ toYaml . }}`, `{{ .Items }}`)
	executeAll(t, s, &setData{Name: "a", Items: []string{"x"}}, newBudget())
	if s.templates[0].memo.Len() != 1 || s.templates[1].memo.Len() != 0 || s.templates[2].memo.Len() != 1 {
		t.Errorf("kept %d, %d, %d outputs; want 1, 0, 1", s.templates[0].memo.Len(), s.templates[1].memo.Len(), s.templates[2].memo.Len())
	}
	got := executeAll(t, s, &setData{Name: "a", Items: []string{"y"}}, newBudget())
	if want := []string{"a", "name: a\nproxy: null\nitems:\n    - \"y\"", "[y]"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if s.templates[0].memo.Len() != 1 || s.templates[2].memo.Len() != 2 {
		t.Error("a template's output was kept again for the same fields, or not for new ones")
	}

	m, err := Compile(Sources{Templates: []Source{{Name: "m", Text: `{{ .k }}`}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1", "2"} {
		if out := executeAll(t, m, map[string]string{"k": v}, newBudget()); out[0] != v {
			t.Errorf("map data: got %q, want %q", out[0], v)
		}
	}
	if m.templates[0].memo.Len() != 0 {
		t.Error("outputs kept for map data")
	}
}

// TestErrors: errors name the template and its line, whether compiling,
// starting or executing.
func TestErrors(t *testing.T) {
	src := Sources{Data: reflect.TypeFor[*setData](), Templates: []Source{{Name: "ok", Text: "x"}, {Name: "/etc/bad", Text: "a\n{{ nope }}"}}}
	_, err := Compile(src)
	var te *Error
	if !errors.As(err, &te) || te.Name != "/etc/bad" || te.Shared || te.Line != 2 || err.Error() != `template: line 2: function "nope" not defined` {
		t.Errorf("compile: %#v %v", te, err)
	}

	s := compileTest(t, map[string]string{"s": "\n\n{{ fail \"no\" }}"}, "x")
	_, err = s.Start(&setData{}, newBudget())
	if !errors.As(err, &te) || te.Name != "s" || !te.Shared || te.Line != 3 || !strings.HasPrefix(err.Error(), "template: line 3: ") {
		t.Errorf("start: %#v %v", te, err)
	}

	s = compileTest(t, nil, "{{ range until 10 }}{{ range until 20000 }}{{ end }}{{ end }}", "{{ .Nope }}")
	x, err := s.Start(&setData{}, NewBudget(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	_, err = x.Execute(0)
	var be *BudgetError
	if !errors.As(err, &te) || te.Line != 1 || !errors.As(err, &be) || be.Timeout() {
		t.Errorf("budget: %v", err)
	}
	if _, err = x.Execute(1); !errors.As(err, &te) || te.Line != 1 || !strings.Contains(err.Error(), "can't evaluate field Nope") {
		t.Errorf("execute: %v", err)
	}
}

// TestBudgetIsShared: executions that share a budget share its limits, and
// running out of time is a timeout.
func TestBudgetIsShared(t *testing.T) {
	s := compileTest(t, nil, `{{ repeat 1500000 "x" }}`)
	b := newBudget()
	executeAll(t, s, &setData{}, b)
	x, err := s.Start(&setData{}, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Execute(0); err == nil || !strings.Contains(err.Error(), "templates wrote more than 2 MiB") {
		t.Errorf("second execution: %v, want the total output exceeded", err)
	}

	x, err = s.Start(&setData{}, NewBudget(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var be *BudgetError
	if _, err := x.Execute(0); !errors.As(err, &be) || !be.Timeout() {
		t.Errorf("out of time: %v", err)
	}
}

func TestReads(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shared map[string]string
		texts  []string
		want   map[string]bool
	}{
		{name: "a template names a field", texts: []string{"{{ .Name }}"},
			want: map[string]bool{"Name": true, "Items": false, "Unknown": false}},
		{name: "a shared template names it", shared: map[string]string{"s": "{{ range .Items }}{{ . }}{{ end }}"}, texts: []string{"x"},
			want: map[string]bool{"Items": true, "Name": false}},
		{name: "the whole data names nothing", texts: []string{"{{ toJson . }}"},
			want: map[string]bool{"Name": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := compileTest(t, tc.shared, tc.texts...)
			for field, want := range tc.want {
				if got := s.Reads(field); got != want {
					t.Errorf("Reads(%q) = %v, want %v", field, got, want)
				}
			}
		})
	}
}
