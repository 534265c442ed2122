package cloudconfig

import "strings"

// ini writes the gcfg INI dialect the in-tree cloud providers read.
type ini struct{ strings.Builder }

func (w *ini) section(name string) {
	if w.Len() > 0 {
		w.WriteByte('\n')
	}
	w.WriteString("[" + name + "]\n")
}

// str writes key with value quoted, so that any character survives.
func (w *ini) str(key, value string) {
	w.WriteString(key + " = ")
	w.WriteString(quote(value))
	w.WriteByte('\n')
}

// raw writes key with value as is, for booleans and numbers.
func (w *ini) raw(key, value string) {
	w.WriteString(key + " = " + value + "\n")
}

// quote returns s as a gcfg quoted value: backslash, quote, newline and tab
// escaped; ; and # are not comments inside quotes.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
