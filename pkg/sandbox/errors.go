package sandbox

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/template"
)

// maxErrorMessage bounds the text of a template's error.
const maxErrorMessage = 1 << 10

// Error is the failure of one template of a Set, at compile or execution.
// Its text says where in the template it failed, as
// `template: line 12: function "foo" not defined`, cut at 1 KiB ({{ fail }}
// takes any text); the caller says which template that is, in its own
// terms, from Name and Shared. It wraps a *BudgetError if the budget was
// exceeded.
type Error struct {
	Name   string // the template's name in Sources
	Shared bool   // one of Sources.Shared
	Line   int    // 0: not known
	msg    string
	err    error
}

func (e *Error) Error() string { return e.msg }

func (e *Error) Unwrap() error { return e.err }

// newError is err of the template parsed as name, its position cut to the
// line and its text to maxErrorMessage.
func newError(name string, shared bool, err error) *Error {
	e := &Error{Name: name, Shared: shared, err: err}
	if be, line, ok := budgetLine(err, name); ok {
		e.msg = be.Error()
		if line != "" {
			e.msg = "template: line " + line + ": " + e.msg
			e.Line, _ = strconv.Atoi(line)
		}
		return e
	}
	msg := err.Error()
	if len(msg) > maxErrorMessage {
		// {{ fail }} takes any text; callers keep and show errors.
		msg = strings.ToValidUTF8(msg[:maxErrorMessage], "") + "…"
	}
	if rest, ok := strings.CutPrefix(msg, "template: "+name+":"); ok {
		line, rest, _ := strings.Cut(rest, ":")
		// Execution errors carry a column and repeat the template's name.
		if col, after, ok := strings.Cut(rest, ":"); ok && isDigits(col) {
			rest = after
		}
		rest = strings.Replace(rest, fmt.Sprintf(" executing %q", name), "", 1)
		msg = "template: line " + line + ":" + rest
		e.Line, _ = strconv.Atoi(line)
	}
	e.msg = msg
	return e
}

// budgetLine returns the budget error in err and the line of the template
// parsed as tmplName where it happened ("" if unknown).
func budgetLine(err error, tmplName string) (*BudgetError, string, bool) {
	var be *BudgetError
	if !errors.As(err, &be) {
		return nil, "", false
	}
	var ee template.ExecError
	if !errors.As(err, &ee) {
		return be, "", true
	}
	// Templates defined in the file report positions in it, under its name.
	rest, ok := strings.CutPrefix(ee.Err.Error(), "template: "+tmplName+":")
	if !ok {
		return be, "", true
	}
	line, _, _ := strings.Cut(rest, ":")
	if !isDigits(line) {
		line = ""
	}
	return be, line, true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
