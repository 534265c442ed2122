// Package sandbox executes Go text/template templates written by people the
// process does not trust, within a budget, so that no template can crash,
// hang or starve it, or read what the process can read.
//
// # Use
//
// Compile parses a set of named templates once (per revision of their text)
// with the function set below, and instruments them for the budget:
//
//	set, err := sandbox.Compile(sandbox.Sources{
//		Data:      reflect.TypeFor[*Data](),
//		Shared:    map[string]string{"proxy": `{{ with .Proxy }}{{ . }}{{ end }}`},
//		Templates: []sandbox.Source{{Name: "/etc/app.conf", Text: `proxy: {{ template "proxy" }}`}},
//	})
//
// Each piece of work takes a Budget and executes the set with its data:
// Start runs the shared templates once, then Execute runs one template of
// Sources.Templates, by its index, and returns its output:
//
//	b := sandbox.NewBudget(time.Second)
//	x, err := set.Start(data, b)
//	out, err := x.Execute(0)
//
// Several sets (and several executions) may share one budget, which bounds
// them together. A Set is safe for concurrent executions; an Execution and
// a Budget belong to one goroutine.
//
// Shared templates are those the others call without passing data,
// {{ template "name" }}, and that still see the execution's data. Each runs
// once per execution, in the order of their names, and every such call
// prints a newline and its output, trailing white space trimmed (nothing
// for an empty output); a "{{" in it stays text. A template's own {{ define }}s are
// called as text/template calls them.
//
// # What a template may do
//
// Everything text/template offers, with sprig v3's functions and toYaml,
// fromYaml, toJson, fromJson, toToml and fromToml (and their Array forms),
// less what would reach beyond the template: env and expandenv (the
// environment), getHostByName (the network) and the key generators (one call
// takes seconds or 32 MiB, and cannot be interrupted). Dates are UTC: the
// time zone is the process's environment, and other zones are read from
// disk. text/template's printing builtins are replaced by ones that measure
// their arguments first. A template cannot open files, read the environment
// or the network, or call anything outside this set; docs/templates.md lists
// every function, grouped by how it is bounded (funcset.go).
//
// # What it costs
//
// text/template cannot be interrupted and has no hooks, so the budget is
// built in when a set is compiled (instrument.go): the clock is read before
// every action and at every range iteration and template call, functions
// are called as they are, checked before the call or charged after it
// (funcset.go, funcwrap.go), and an action that may print a list or dict
// measures it first. The limits of one Budget:
//
//	time, from NewBudget                                   as given
//	range iterations and {{ template }} calls, together    100,000
//	nesting of {{ template }} calls                        100
//	one value a function produces or reads whole           4 MiB
//	  (text bytes; 16 B per list element, 48 B per dict entry, plus their texts)
//	nesting of lists and dicts a function reads whole      100
//	all values functions produce and text variables keep   32 MiB
//	output of one template                                 4 MiB
//	output of all templates Execute runs                   2 MiB
//	text fromJson, fromYaml and fromToml parse             256 KiB
//	semver and semverCompare arguments                     1 KiB
//	regular expressions: pattern; instructions × text      16 KiB; 2^26
//	  bytes; matches                                       262,144
//	arguments of one action, in all its commands           256
//
// Exceeding one fails the execution with an *Error wrapping a *BudgetError
// ("render budget exceeded: ..."). Only running out of time
// (BudgetError.Timeout) may be the machine's doing rather than the
// templates'; every other limit counts work, and the same templates with the
// same data exceed it again. The worst single function call a template can
// make within these limits takes about a second; the two failures a Go
// process cannot survive, running out of memory or stack, need values or
// nesting the budget refuses before they are allocated.
//
// # Memo
//
// A template's output is a function of the fields of the data it reads
// (deps.go), unless it hands the whole data to something ({{ toYaml . }},
// {{ template "x" . }}), calls a function that is not pure (now, rand…,
// uuidv4) or a method of the data with arguments. For data that is a
// pointer to a struct, each such pure template keeps up to 128 recent outputs
// of up to 64 KiB (memo.go), by a 128-bit hash of the values of the fields it
// reads and of the shared templates it calls, and an execution whose values
// are the same reuses the output. Exported methods of the data without
// arguments count as fields: they must return the same for the same data.
//
// # Errors
//
// Every error of Compile, Start and Execute is an *Error: the template's
// Name (as in Sources), whether it is Shared, and its Line, with a text that
// says where in the template, `template: line 12: function "foo" not
// defined`, cut at 1 KiB ({{ fail }} takes any text). Callers say which
// template that was in their own terms.
package sandbox
