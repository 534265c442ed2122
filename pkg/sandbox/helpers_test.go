package sandbox

import (
	"flag"
	"io"
	"os"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the function list in docs/templates.md")

// execute runs the template with data, charging b, outside of a set.
func (e *executable) execute(w io.Writer, data any, b *Budget) error {
	return e.run(w, data, b, nil)
}

// newBudget is a budget of one second.
func newBudget() *Budget {
	return NewBudget(time.Second)
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
