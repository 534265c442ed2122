package sandbox

import (
	"fmt"
	"math"
	"time"
)

// Templates are untrusted: every execution runs within a Budget, and a
// template that exceeds it fails with a *BudgetError, as any other template
// error. text/template cannot be interrupted, so the budget is checked where
// a template can spend without bound: at every range iteration and template
// call (instrument.go), and in every function it calls (funcwrap.go), which
// also refuse to produce values larger than the budget allows before they
// allocate them.

const (
	// maxOutput bounds what one template may write: far beyond what a
	// configuration file needs, it stops a runaway {{ range }} before it
	// exhausts memory.
	maxOutput = 4 << 20
	// maxIterations bounds range iterations and template calls together.
	maxIterations = 100_000
	// maxCallDepth bounds nested {{ template }} calls.
	maxCallDepth = 100
	// maxValue bounds any one value a template function produces or reads
	// deeply (printed, serialized, compared): a string's bytes, or a list's or
	// dict's estimated size (valueSize).
	maxValue = maxOutput
	// maxNesting bounds how deeply lists and dicts nest in a value a
	// function reads deeply.
	maxNesting = 100
	// maxProduced bounds all values the functions of one budget produce.
	maxProduced = 32 << 20
	// maxTotalOutput bounds the output of all templates executed within one
	// budget: far more than configuration files need, and twice what one
	// Kubernetes object can hold.
	maxTotalOutput = 2 << 20
	// maxParsed bounds the text fromJson, fromYaml and fromToml parse: the
	// values they build can be many times larger than the text.
	maxParsed = 256 << 10
)

// BudgetError is an execution that exceeded its budget.
type BudgetError struct {
	msg       string
	transient bool
}

func (e *BudgetError) Error() string { return "render budget exceeded: " + e.msg }

// Timeout reports whether the budget ran out of time. That may be a busy
// machine's doing rather than the templates': every other limit counts work,
// and the same templates with the same data exceed it again.
func (e *BudgetError) Timeout() bool { return e.transient }

func exceeded(format string, args ...any) *BudgetError {
	return &BudgetError{msg: fmt.Sprintf(format, args...)}
}

// Budget is what executions may still spend. The executions of one piece of
// work (a render of two sets, say) share one budget, and so the limits the
// package documentation lists. It is used by one goroutine.
type Budget struct {
	limit      time.Duration
	deadline   time.Time
	iterations int
	depth      int
	produced   int64
	output     int64
}

// NewBudget returns a budget of limit time, from now, and the other limits.
func NewBudget(limit time.Duration) *Budget {
	return &Budget{limit: limit, deadline: time.Now().Add(limit)}
}

// clock fails once the budget has run out of time.
func (b *Budget) clock() error {
	if time.Now().After(b.deadline) {
		err := exceeded("took longer than %s", b.limit)
		err.transient = true
		return err
	}
	return nil
}

// iterate counts one range iteration or template call.
func (b *Budget) iterate() error {
	b.iterations++
	if b.iterations > maxIterations {
		return exceeded("more than %d range iterations and template calls", maxIterations)
	}
	return b.clock()
}

// enter and leave bracket the execution of a template called by {{ template }}.
func (b *Budget) enter() error {
	b.depth++
	if b.depth > maxCallDepth {
		return exceeded("template calls nested more than %d deep", maxCallDepth)
	}
	return b.iterate()
}

func (b *Budget) leave() { b.depth-- }

// produce charges a value of n bytes a function produced.
func (b *Budget) produce(fn string, n int64) error {
	if err := tooLarge(fn, float64(n)); err != nil {
		return err
	}
	b.produced += n
	if b.produced > maxProduced {
		return exceeded("template functions produced more than %s", sizeString(maxProduced))
	}
	return nil
}

// write charges n bytes of template output.
func (b *Budget) write(n int) error {
	b.output += int64(n)
	if b.output > maxTotalOutput {
		return exceeded("templates wrote more than %s", sizeString(maxTotalOutput))
	}
	return nil
}

// tooLarge fails when a function would produce n bytes, more than one value may hold.
func tooLarge(name string, n float64) error {
	if n > maxValue {
		return exceeded("%s would produce %s", name, beyond(int64(min(n, math.MaxInt64)), maxValue))
	}
	return nil
}

// beyond says that n bytes are more than limit: "9.31 GiB, more than 4 MiB",
// or "more than 4 MiB" when n prints as the limit.
func beyond(n, limit int64) string {
	if sizeString(n) == sizeString(limit) {
		return "more than " + sizeString(limit)
	}
	return sizeString(n) + ", more than " + sizeString(limit)
}

// sizeString prints a byte count for error messages: "4 MiB", "1.5 GiB", "120 B".
func sizeString(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.3g GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.3g MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.3g KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
