package render

import (
	"fmt"
	"strings"
)

// tomlWriter writes TOML laid out as github.com/BurntSushi/toml does with an
// empty indent, which is what nodes provisioned by the upstream project get:
// a blank line before top-level tables only, quoted keys where a bare key is
// not allowed. Hand-written because the containerd files are rendered for every
// MachineDeployment and reflection-based encoding dominated the cost.
type tomlWriter struct {
	b strings.Builder
}

func (w *tomlWriter) table(keys ...string) {
	if len(keys) == 1 && w.b.Len() > 0 {
		w.b.WriteByte('\n')
	}
	w.b.WriteByte('[')
	for i, k := range keys {
		if i > 0 {
			w.b.WriteByte('.')
		}
		w.b.WriteString(tomlKey(k))
	}
	w.b.WriteString("]\n")
}

func (w *tomlWriter) str(key, value string) {
	w.b.WriteString(tomlKey(key))
	w.b.WriteString(" = ")
	w.b.WriteString(tomlString(value))
	w.b.WriteByte('\n')
}

func (w *tomlWriter) boolean(key string, value bool) {
	fmt.Fprintf(&w.b, "%s = %t\n", tomlKey(key), value)
}

func (w *tomlWriter) integer(key string, value int) {
	fmt.Fprintf(&w.b, "%s = %d\n", tomlKey(key), value)
}

func (w *tomlWriter) strings(key string, values ...string) {
	w.b.WriteString(tomlKey(key))
	w.b.WriteString(" = [")
	for i, v := range values {
		if i > 0 {
			w.b.WriteString(", ")
		}
		w.b.WriteString(tomlString(v))
	}
	w.b.WriteString("]\n")
}

func (w *tomlWriter) String() string { return w.b.String() }

func tomlKey(k string) string {
	if k == "" {
		return `""`
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return tomlString(k)
		}
	}
	return k
}

func tomlString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
