package ignition

import (
	"encoding/base64"
	"slices"
	"strings"
	"unsafe"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Data URLs are built here rather than by butane, which tries percent-encoding
// and base64 for every file with a formatted print per escaped byte: the
// slowest part of a translation.
//
// Both encoders (butane's and the direct one) use these functions, so a file's
// data URL is the same bytes on either path. A data URL holds only ASCII
// letters, digits and "+/=:;,%-_.!~*'()", none of which JSON escapes: the
// direct encoder writes it without escaping (TestDataURLNeedsNoEscaping).

// dataURL returns a data URL holding s: base64, the compact choice for scripts
// and configs, unless s holds the <MACHINE_NAME> placeholder, which must stay
// visible to machine-controller as %3CMACHINE_NAME%3E.
func dataURL(s string) string {
	return string(appendDataURL(nil, s))
}

// appendDataURL appends dataURL(s) to b.
func appendDataURL(b []byte, s string) []byte {
	if strings.Contains(s, machinecontroller.MachineNamePlaceholder) {
		return appendPercentDataURL(b, s)
	}
	b = append(b, "data:;base64,"...)
	n := len(b)
	size := base64.StdEncoding.EncodedLen(len(s))
	b = slices.Grow(b, size)[:n+size]
	// Only read: viewing the string's bytes saves copying every file.
	base64.StdEncoding.Encode(b[n:], unsafe.Slice(unsafe.StringData(s), len(s)))
	return b
}

// dataURLLen is len(dataURL(s)).
func dataURLLen(s string) int {
	if !strings.Contains(s, machinecontroller.MachineNamePlaceholder) {
		return len("data:;base64,") + base64.StdEncoding.EncodedLen(len(s))
	}
	n := len("data:,") + 3*len(s)
	for i := 0; i < len(s); i++ {
		if unreserved(s[i]) {
			n -= 2
		}
	}
	return n
}

// percentDataURL returns a data URL of s with every byte but RFC 2396's
// unreserved characters percent-encoded.
func percentDataURL(s string) string {
	return string(appendPercentDataURL(nil, s))
}

func appendPercentDataURL(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = slices.Grow(b, len("data:,")+len(s)*2)
	b = append(b, "data:,"...)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', hex[c>>4], hex[c&0xf])
		}
	}
	return b
}

func unreserved(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-_.!~*'()", c) >= 0
}
