package cloudconfig

import "strings"

// ini writes the gcfg INI dialect the in-tree cloud providers read. Each cloud
// has its own spacing around "=": payloads are compared with upstream's byte
// for byte, so generators spell out the separator they use.
type ini struct{ strings.Builder }

// line writes key, sep and value as they are.
func (w *ini) line(key, sep, value string) {
	w.WriteString(key)
	w.WriteString(sep)
	w.WriteString(value)
	w.WriteByte('\n')
}

// quoteEscaper escapes what gcfg reads as escapes inside quotes; like upstream
// it leaves everything else, newlines included, as it is.
var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// quote returns s as a gcfg quoted value; ; and # are not comments inside quotes.
func quote(s string) string {
	return `"` + quoteEscaper.Replace(s) + `"`
}
