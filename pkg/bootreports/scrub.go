package bootreports

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Log tails come from nodes: untrusted, and the output of steps that handle
// credentials (the fetch token, the kubelet's bootstrap token, registry
// logins, keys). Before a tail is stored, anything that looks like one is
// replaced by Redacted. The patterns err on the side of redacting.

// Redacted replaces what Scrub removes.
const Redacted = "[redacted]"

var scrubbers = []struct {
	re   *regexp.Regexp
	repl string
}{
	// PEM private keys (RSA, EC, OpenSSH, PKCS#8, encrypted), and the rest
	// of a tail whose key is cut off by its end.
	{regexp.MustCompile(`(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`), Redacted},
	// HTTP authorization: Bearer credentials anywhere (curl -H
	// 'Authorization: Bearer …', error messages), Basic ones in headers.
	{regexp.MustCompile(`(?i)\b(bearer(?:\s+|%20))[A-Za-z0-9._~+/=-]{8,}`), "${1}" + Redacted},
	{regexp.MustCompile(`(?i)(authorization:\s*basic\s+)\S+`), "${1}" + Redacted},
	// JWTs (ServiceAccount tokens, OIDC tokens): three base64url parts, the
	// first a JSON header.
	{regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`), Redacted},
	// Bootstrap tokens: [a-z0-9]{6}.[a-z0-9]{16}.
	{regexp.MustCompile(`\b[a-z0-9]{6}\.[a-z0-9]{16}\b`), Redacted},
	// Credentials in URLs: https://user:password@host.
	{regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@`), "${1}" + Redacted + "@"},
	// key=value and key: value of keys that name a secret.
	{regexp.MustCompile(`(?i)\b((?:[a-z0-9_-]*(?:token|password|passwd|secret|api[_-]?key))["']?\s*[:=]\s*["']?)[^\s"',;]+`), "${1}" + Redacted},
}

// Scrub returns s with everything that looks like a credential replaced by
// Redacted.
func Scrub(s string) string {
	for _, sc := range scrubbers {
		s = sc.re.ReplaceAllString(s, sc.repl)
	}
	return s
}

// Bounds of a stored log tail.
const (
	MaxLogTailLines = 40
	MaxLogTailBytes = 4096
)

// Tail returns the end of s: at most MaxLogTailLines lines and
// MaxLogTailBytes bytes, valid UTF-8, without a trailing newline. A line cut
// by the byte bound is left out whole: what remains of it could be the end
// of a credential Scrub no longer recognizes.
func Tail(s string) string {
	s = strings.ToValidUTF8(strings.TrimRight(s, "\r\n"), "\uFFFD")
	lines := strings.Split(s, "\n")
	if len(lines) > MaxLogTailLines {
		lines = lines[len(lines)-MaxLogTailLines:]
	}
	s = strings.Join(lines, "\n")
	if len(s) <= MaxLogTailBytes {
		return s
	}
	s = s[len(s)-MaxLogTailBytes:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	// One line longer than the bound: keep its end, at a rune boundary.
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}

// errorWords mark the line of a log tail that says what went wrong.
var errorWords = regexp.MustCompile(`(?i)(error|fail|fatal|denied|refused|not found|no such|mismatch|cannot|can't|unable|timed out|timeout|invalid|\b40[0-9]\b|\b50[0-9]\b)`)

// maxLine bounds the error line quoted in messages and Events.
const maxLine = 200

// FirstErrorLine returns the first line of a log tail that looks like an
// error, else its last non-empty line, cut to a message's width.
func FirstErrorLine(tail string) string {
	lines := strings.Split(tail, "\n")
	line := ""
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			line = lines[i]
			break
		}
	}
	for _, l := range lines {
		if errorWords.MatchString(l) {
			line = l
			break
		}
	}
	line = strings.TrimSpace(line)
	if len(line) > maxLine {
		line = strings.ToValidUTF8(line[:maxLine-3], "") + "..."
	}
	return line
}
