package cloudinit

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// The scalars written here are read back unchanged by every YAML 1.1 and 1.2
// parser (cloud-init uses PyYAML, Flatcar's coreos-cloudinit a Go parser), and
// none of them spans a whitespace-only line: machine-controller drops those from
// bootstrap user-data, which would silently change a literal block.

var errInvalidUTF8 = errors.New("not valid UTF-8")

// printable reports whether YAML allows r unescaped in a scalar. \u0085, \u2028
// and \u2029 are excluded because PyYAML treats them as line breaks, \uFEFF
// because it is a byte order mark.
func printable(r rune) bool {
	switch {
	case r == '\t':
		return true
	case r < 0x20 || r == 0x7f:
		return false
	case r < 0x7f:
		return true
	case r < 0xa0:
		return false
	case r == 0x2028 || r == 0x2029 || r == 0xfeff:
		return false
	case r >= 0xd800 && r <= 0xdfff:
		return false
	case r == 0xfffe || r == 0xffff:
		return false
	}
	return r <= utf8.MaxRune
}

// appendQuoted appends s as a single-quoted scalar, or double-quoted with escapes
// when s holds characters a single-quoted scalar cannot (line breaks, controls).
func appendQuoted(b []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return b, errInvalidUTF8
	}
	for _, r := range s {
		if !printable(r) || r == '\t' {
			return appendDoubleQuoted(b, s), nil
		}
	}
	// A leading or trailing space is kept by quoting; only the quote needs escaping.
	b = append(b, '\'')
	for {
		i := strings.IndexByte(s, '\'')
		if i < 0 {
			break
		}
		b = append(b, s[:i+1]...)
		b = append(b, '\'')
		s = s[i+1:]
	}
	b = append(b, s...)
	return append(b, '\''), nil
}

const hexDigits = "0123456789ABCDEF"

// appendDoubleQuoted appends s, which must be valid UTF-8, as a double-quoted
// scalar on a single line.
func appendDoubleQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r < 0x100 && !printable(r):
			b = append(b, '\\', 'x', hexDigits[r>>4], hexDigits[r&0xf])
		case !printable(r):
			b = append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

// literalSafe reports whether s can be written as a literal block scalar: valid
// UTF-8, printable, and every line (the final newline aside) holding something
// other than blanks.
func literalSafe(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	blank := true
	for i, r := range s {
		switch {
		case r == '\n':
			if blank {
				return false
			}
			// A final newline ends the last line; it does not start a blank one.
			blank = i+1 < len(s)
		case r == ' ' || r == '\t':
		case !printable(r):
			return false
		default:
			blank = false
		}
	}
	return !blank || strings.HasSuffix(s, "\n")
}

// appendLiteral appends s, for which literalSafe holds, as a literal block scalar
// whose lines are indented by indent spaces, two more than the mapping holding it.
// The chomping indicator keeps a single final newline or its absence exact; the
// indentation indicator keeps leading spaces of the first line (and Go YAML
// parsers need it before a leading tab).
func appendLiteral(b []byte, s string, indent int) []byte {
	b = append(b, '|')
	if s[0] == ' ' || s[0] == '\t' {
		b = append(b, '2')
	}
	if !strings.HasSuffix(s, "\n") {
		b = append(b, '-')
	}
	b = append(b, '\n')
	for len(s) > 0 {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		b = appendSpaces(b, indent)
		b = append(b, line...)
		b = append(b, '\n')
	}
	return b
}

func appendSpaces(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}
