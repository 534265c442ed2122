package review

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"

	"github.com/pmezard/go-difflib/difflib"
)

// Limits of the diffs of one Differ (one review): a diff is a view of a
// file, not the file, and a review of a thousand MachineDeployments must
// answer in moments and fit a response.
const (
	// maxDiffInput is the most text of one side diffed; longer items say so.
	maxDiffInput = 256 << 10
	// maxDiff cuts one diff.
	maxDiff = 32 << 10
	// maxDiffs is the most diff text one Differ hands out; later items say so.
	maxDiffs = 8 << 20
)

// Differ makes unified diffs, once per pair of texts: the reviews of one
// request diff the same change for many MachineDeployments. It is safe for
// concurrent use.
type Differ struct {
	mu    sync.Mutex
	diffs map[[sha256.Size]byte]string
	spent int
}

// NewDiffer returns a Differ for one review.
func NewDiffer() *Differ {
	return &Differ{diffs: map[[sha256.Size]byte]string{}}
}

// Diff returns the unified diff of before and after, labelled with name.
func (d *Differ) Diff(name, before, after string) string {
	if len(before) > maxDiffInput || len(after) > maxDiffInput {
		return fmt.Sprintf("(not diffed: %d and %d bytes, more than %d)\n", len(before), len(after), maxDiffInput)
	}
	h := sha256.New()
	h.Write([]byte(name))
	fmt.Fprintf(h, "\x00%d\x00", len(before))
	h.Write([]byte(before))
	h.Write([]byte(after))
	var key [sha256.Size]byte
	h.Sum(key[:0])

	d.mu.Lock()
	diff, ok := d.diffs[key]
	d.mu.Unlock()
	if !ok {
		diff = unified(name, before, after)
		d.mu.Lock()
		d.diffs[key] = diff
		d.mu.Unlock()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.spent+len(diff) > maxDiffs {
		return "(not shown: the review's diffs exceed 8 MiB; narrow it with spec.namespace or spec.machineDeploymentSelector)\n"
	}
	d.spent += len(diff)
	return diff
}

// unified is the diff of before and after with three lines of context.
func unified(name, before, after string) string {
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(before), B: lines(after), FromFile: "a " + name, ToFile: "b " + name, Context: 3,
	})
	if err != nil {
		// It only writes to memory.
		return fmt.Sprintf("(not diffed: %v)\n", err)
	}
	if len(diff) > maxDiff {
		cut := strings.LastIndexByte(diff[:maxDiff], '\n') + 1
		diff = diff[:cut] + fmt.Sprintf("(cut: %d more bytes of diff)\n", len(diff)-cut)
	}
	return diff
}

// lines splits text after each newline; a last line without one gets one
// and a note, as diff(1) says "\ No newline at end of file".
func lines(text string) []string {
	if text == "" {
		return nil
	}
	out := difflib.SplitLines(text)
	// SplitLines appends a newline to every line, and an empty last one.
	if len(out) > 0 && out[len(out)-1] == "\n" {
		out = out[:len(out)-1]
	}
	if !strings.HasSuffix(text, "\n") {
		out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], "\n") + "\n\\ No newline at end of file\n"
	}
	return out
}
