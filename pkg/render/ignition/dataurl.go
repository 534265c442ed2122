package ignition

import (
	"encoding/base64"
	"strings"
)

// Data URLs are built here rather than by butane, which tries percent-encoding
// and base64 for every file with a formatted print per escaped byte: the
// slowest part of a translation.

// dataURL returns a data URL holding s: base64, the compact choice for scripts
// and configs, unless s holds the <MACHINE_NAME> placeholder, which must stay
// visible to machine-controller as %3CMACHINE_NAME%3E.
func dataURL(s string) string {
	if strings.Contains(s, machineNamePlaceholder) {
		return percentDataURL(s)
	}
	return "data:;base64," + base64.StdEncoding.EncodeToString([]byte(s))
}

// percentDataURL returns a data URL of s with every byte but RFC 2396's
// unreserved characters percent-encoded.
func percentDataURL(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len("data:,") + len(s)*2)
	b.WriteString("data:,")
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		}
	}
	return b.String()
}

func unreserved(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-_.!~*'()", c) >= 0
}
