package migrate

import (
	"fmt"
	"io"
	"strings"
)

// Write prints the plan: what upstream left, what blocks, the steps in order
// (those that wait say why) and what stays as it is.
func (p *Plan) Write(w io.Writer) error {
	pw := &printer{w: w}
	if len(p.Found) == 0 {
		pw.line("Upstream operating-system-manager: nothing of it is left.")
	} else {
		pw.line("Upstream operating-system-manager left:")
		for _, f := range p.Found {
			pw.line("  " + f)
		}
	}
	if len(p.Blocked) > 0 {
		pw.line("")
		pw.line("Blocked, nothing can be applied:")
		for _, b := range p.Blocked {
			pw.line("  - " + b)
		}
	}
	if len(p.Steps) > 0 {
		pw.line("")
		pw.line("Plan:")
		for i, s := range p.Steps {
			pw.line(fmt.Sprintf("  %d. %s", i+1, s))
		}
	}
	if len(p.Notes) > 0 {
		pw.line("")
		pw.line("Not changed by migrate:")
		for _, n := range p.Notes {
			pw.line("  - " + n)
		}
	}
	pw.line("")
	switch n := len(p.Steps); {
	case n == 0:
		pw.line("Nothing to do.")
	case p.Pending() == 0:
		pw.line(fmt.Sprintf("%d steps to do.", n))
	default:
		pw.line(fmt.Sprintf("%d steps to do, %d of them wait.", n, p.Pending()))
	}
	return pw.err
}

// WriteResult prints the result of step i as Apply reports it.
func WriteResult(w io.Writer, i int, s Step, err error) error {
	result := "done"
	if err != nil {
		result = "failed: " + err.Error()
	}
	_, werr := fmt.Fprintf(w, "  %d. %s: %s\n", i+1, result, firstLine(s.Text))
	return werr
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// printer writes lines and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) line(s string) {
	if p.err == nil {
		_, p.err = fmt.Fprintln(p.w, s)
	}
}
