package render

import (
	"fmt"
	"time"
)

// OSP authors are untrusted: every render runs within a budget, and a
// template that exceeds it fails that render with a budgetError, as any other
// template error. text/template cannot be interrupted, so the budget is
// checked where a template can spend without bound: at every range iteration
// and template call (instrument.go), and in every function it calls
// (funcwrap.go), which also refuse to produce values larger than the budget
// allows before they allocate them.
// renderTime bounds one Render, from the first template executed.
var renderTime = time.Second

const (
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
	// maxProduced bounds all values the functions of one render produce.
	maxProduced = 32 << 20
	// maxRenderOutput bounds the output of all templates of one render: twice
	// what a Secret (the provisioning payload's) can hold.
	maxRenderOutput = 2 << 20
	// maxParsed bounds the text fromJson, fromYaml and fromToml parse: the
	// values they build can be many times larger than the text.
	maxParsed = 256 << 10
)

// budgetError is a render that exceeded its budget. A render that ran out of
// time may have been slowed by a busy machine rather than by its templates:
// it is transient, every other limit counts work and fails the same way again.
type budgetError struct {
	msg       string
	transient bool
}

func (e *budgetError) Error() string { return "render budget exceeded: " + e.msg }

func exceeded(format string, args ...any) *budgetError {
	return &budgetError{msg: fmt.Sprintf(format, args...)}
}

// budget is what one Render may still spend. It is used by one goroutine.
type budget struct {
	deadline   time.Time
	iterations int
	depth      int
	produced   int64
	output     int64
}

func newBudget() *budget {
	return &budget{deadline: time.Now().Add(renderTime)}
}

// clock fails once the render has run out of time.
func (b *budget) clock() error {
	if time.Now().After(b.deadline) {
		err := exceeded("took longer than %s", renderTime)
		err.transient = true
		return err
	}
	return nil
}

// iterate counts one range iteration or template call.
func (b *budget) iterate() error {
	b.iterations++
	if b.iterations > maxIterations {
		return exceeded("more than %d range iterations and template calls", maxIterations)
	}
	return b.clock()
}

// enter and leave bracket the execution of a template called by {{ template }}.
func (b *budget) enter() error {
	b.depth++
	if b.depth > maxCallDepth {
		return exceeded("template calls nested more than %d deep", maxCallDepth)
	}
	return b.iterate()
}

func (b *budget) leave() { b.depth-- }

// produce charges a value of n bytes a function produced.
func (b *budget) produce(fn string, n int64) error {
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
func (b *budget) write(n int) error {
	b.output += int64(n)
	if b.output > maxRenderOutput {
		return exceeded("templates wrote more than %s", sizeString(maxRenderOutput))
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
