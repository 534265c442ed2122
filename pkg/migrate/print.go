package migrate

import (
	"fmt"
	"io"
)

// Write prints the plan: what upstream left, what blocks, the steps in order
// (those that wait say why) and what stays as it is.
func (p *Plan) Write(w io.Writer) error {
	pw := &printer{w: w}
	p.found(pw)
	if len(p.Steps) > 0 {
		pw.line("")
		pw.line("Plan:")
		for i, s := range p.Steps {
			pw.line(fmt.Sprintf("  %d. %s", i+1, s))
		}
	}
	p.notes(pw)
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

// WriteApplying prints what Apply's report says: what upstream left and what
// blocks, then, as Apply reports them (WriteResult), the steps; WriteLeft
// follows.
func (p *Plan) WriteApplying(w io.Writer) error {
	pw := &printer{w: w}
	p.found(pw)
	if len(p.Steps) > 0 && len(p.Blocked) == 0 {
		pw.line("")
		pw.line("Applying:")
	}
	return pw.err
}

// WriteLeft prints what stays as it is, after the steps.
func (p *Plan) WriteLeft(w io.Writer) error {
	pw := &printer{w: w}
	p.notes(pw)
	return pw.err
}

func (p *Plan) found(pw *printer) {
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
}

func (p *Plan) notes(pw *printer) {
	if len(p.Skipped) > 0 {
		pw.line("")
		pw.line("Left alone, named like upstream's objects but not upstream's:")
		for _, s := range p.Skipped {
			pw.line("  - " + s.String())
		}
	}
	if len(p.Notes) > 0 {
		pw.line("")
		pw.line("Not changed by migrate:")
		for _, n := range p.Notes {
			pw.line("  - " + n)
		}
	}
}

// WriteResult prints step i as Apply reports it: done, failed, or waiting
// and why.
func WriteResult(w io.Writer, i int, s Step, err error) error {
	var line string
	switch {
	case err != nil:
		line = fmt.Sprintf("  %d. failed: %s\n     %v", i+1, s.Text, err)
	case s.Wait != "":
		line = fmt.Sprintf("  %d. not yet: %s", i+1, s)
	default:
		line = fmt.Sprintf("  %d. done: %s", i+1, s.Text)
	}
	_, werr := fmt.Fprintln(w, line)
	return werr
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
