package cloudconfig

import (
	"strings"
	"testing"
)

// TestQuote checks that quoted values read back unchanged with gcfg's rules.
// Like upstream's, quote leaves newlines as they are: no cloud-config value has one.
func TestQuote(t *testing.T) {
	for _, s := range []string{"", "plain", `back\slash`, `"quoted"`, "semi;colon #hash", "tab\there", "ünïcödé"} {
		q := quote(s)
		if got := gcfgUnquote(t, q); got != s {
			t.Errorf("quote(%q) = %s reads back as %q", s, q, got)
		}
	}
}

// gcfgUnquote reads a quoted gcfg value the way gcfg's scanner does.
func gcfgUnquote(t *testing.T, q string) string {
	t.Helper()
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		t.Fatalf("%s is not quoted", q)
	}
	var b strings.Builder
	for i := 1; i < len(q)-1; i++ {
		c := q[i]
		switch {
		case c == '\\':
			i++
			switch q[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\\', '"':
				b.WriteByte(q[i])
			default:
				t.Fatalf("%s: unknown escape \\%c", q, q[i])
			}
		case c == '"' || c == '\n':
			t.Fatalf("%s: unescaped %q inside quotes", q, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
