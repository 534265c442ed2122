package registry

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Age formats a creation time as kubectl does.
func Age(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}

// Bytes formats a size for a table cell: 812B, 13.4KiB, 1.2MiB.
func Bytes(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fKiB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1024*1024))
	}
}

// maxCell bounds a text cell: a template error can be long, and a table row is
// read on a terminal. `-o yaml` shows the whole message.
const maxCell = 120

// Short returns the first line of s, cut to a table cell's width.
func Short(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > maxCell {
		s = s[:maxCell-3] + "..."
	}
	return s
}
