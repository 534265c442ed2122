package bootreports

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Log tails come from nodes: untrusted, and the output of steps that handle
// credentials (the fetch token, the kubelet's bootstrap token, registry
// logins, keys). Before a tail is stored, quoted in a message or an Event,
// Scrub replaces by Redacted
//
//   - every value the server knows to be a credential of the MD (Known), in
//     plain, base64 (standard and URL alphabets, with or without padding, at
//     any offset inside a longer base64 text) and line-wrapped base64 forms;
//   - every base64 text (wrapped or not) whose decoding holds a credential;
//   - whatever looks like a credential: private keys, HTTP authorization,
//     JWTs, bootstrap tokens, URL user information, user:password, password
//     and token flags, and values of keys that name a secret.
//
// The patterns err on the side of redacting.

// Redacted replaces what Scrub removes.
const Redacted = "[redacted]"

// minKnownLen is the shortest known value scrubbed by value: shorter ones
// ("admin", "1234", an empty password) would be found all over ordinary
// output, and are left to the patterns.
const minKnownLen = 8

// Known are the values of the credentials the server knows for one
// MachineDeployment, in the forms a log may show them. A nil *Known knows
// none. Build one with NewKnown.
type Known struct {
	// plain are the values (and their JSON- and URL-escaped forms),
	// replaced where they are found.
	plain []string
	// encoded are the parts of their base64 encodings that depend on the
	// value alone, at each of the three offsets a value can have inside a
	// longer base64 text, in both alphabets: where one is found, the whole
	// base64 text around it is replaced.
	encoded []string
}

// NewKnown returns the known credentials values. Values shorter than
// minKnownLen are left out; so is a value the marker Redacted contains.
func NewKnown(values ...string) *Known {
	k := &Known{}
	for _, v := range values {
		if len(v) < minKnownLen || strings.Contains(Redacted, v) {
			continue
		}
		k.plain = append(k.plain, v)
		if j, err := json.Marshal(v); err == nil {
			k.plain = append(k.plain, string(j[1:len(j)-1]))
		}
		k.plain = append(k.plain, url.QueryEscape(v), url.PathEscape(v))
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			for offset := range 3 {
				k.encoded = append(k.encoded, innerBase64(enc, v, offset))
			}
		}
	}
	longestFirst := func(s []string) []string {
		s = slices.DeleteFunc(s, func(v string) bool { return len(v) < minKnownLen })
		slices.SortFunc(s, func(a, b string) int { return len(b) - len(a) })
		return slices.Compact(s)
	}
	k.plain, k.encoded = longestFirst(k.plain), longestFirst(k.encoded)
	return k
}

// innerBase64 returns the characters of the base64 encoding of v, preceded
// by offset bytes, that depend on v's bytes alone.
func innerBase64(enc *base64.Encoding, v string, offset int) string {
	s := enc.EncodeToString(append(make([]byte, offset), v...))
	from, to := (8*offset+5)/6, 8*(offset+len(v))/6
	return s[from:to]
}

// Scrub returns s with every credential known (nil for none) and everything
// that looks like a credential replaced by Redacted. It is idempotent:
// a scrubbed text stays as it is.
func Scrub(s string, known *Known) string {
	// Should a redaction make a text another finds (a known value that
	// holds the marker, formed when a pattern redacts inside it), the next
	// round takes it; rounds end when nothing changes, after one for
	// every text FuzzScrub has tried so far.
	for range 4 {
		next := scrubOnce(s, known)
		if next == s {
			break
		}
		s = next
	}
	return s
}

// scrubOnce is one round: known values and base64 texts first, on the
// text as the node sent it, then the patterns.
func scrubOnce(s string, known *Known) string {
	s = scrubEncoded(s, known)
	s = scrubPatterns(s)
	return s
}

// span is a part of a text to replace, [start, end).
type span struct{ start, end int }

// replaceSpans replaces the spans of s by Redacted, overlapping and
// adjacent ones by one.
func replaceSpans(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	last := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].start <= cur.end; i++ {
			cur.end = max(cur.end, spans[i].end)
		}
		b.WriteString(s[last:cur.start])
		b.WriteString(Redacted)
		last = cur.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// scrubEncoded replaces the known values and every base64 text whose
// decoding holds a credential, read across wrapped lines.
func scrubEncoded(s string, known *Known) string {
	v := unwrap(s)
	var spans []span
	add := func(start, end int) { spans = append(spans, v.original(start, end)) }
	if known != nil {
		for _, p := range known.plain {
			for from := 0; ; {
				i := strings.Index(v.text[from:], p)
				if i < 0 {
					break
				}
				add(from+i, from+i+len(p))
				from += i + 1
			}
		}
		for _, e := range known.encoded {
			for from := 0; ; {
				i := strings.Index(v.text[from:], e)
				if i < 0 {
					break
				}
				start, end := base64Run(v.text, from+i, from+i+len(e))
				add(start, end)
				from = end
			}
		}
	}
	// Base64 texts that decode to a credential (a base64 kubeconfig key, a
	// wrapped token, a docker config).
	for i := 0; i < len(v.text); {
		if !isBase64(v.text[i]) {
			i++
			continue
		}
		start, end := base64Run(v.text, i, i)
		if end-start >= minBase64Len && decodesToCredential(v.text[start:end], known) {
			add(start, end)
		}
		i = max(end, i+1)
	}
	return replaceSpans(s, spans)
}

// minBase64Len is the shortest base64 text decoded: 15 bytes, as much as
// "Bearer " and a short token.
const minBase64Len = 20

// decodesToCredential says whether a base64 text decodes to a text with a
// credential in it.
func decodesToCredential(b64 string, known *Known) bool {
	b64 = strings.TrimRight(b64, "=")
	urlAlphabet, stdAlphabet := strings.ContainsAny(b64, "-_"), strings.ContainsAny(b64, "+/")
	if urlAlphabet && stdAlphabet {
		return false
	}
	if len(b64)%4 == 1 {
		b64 = b64[:len(b64)-1]
	}
	enc := base64.RawStdEncoding
	if urlAlphabet {
		enc = base64.RawURLEncoding
	}
	data, err := enc.DecodeString(b64)
	if err != nil {
		return false
	}
	text := string(data)
	if known != nil {
		for _, p := range known.plain {
			if strings.Contains(text, p) {
				return true
			}
		}
	}
	return scrubPatterns(text) != text
}

func isBase64(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// base64Run returns the base64 text around [start, end) of s: its
// characters, then its padding.
func base64Run(s string, start, end int) (int, int) {
	for start > 0 && isBase64(s[start-1]) {
		start--
	}
	for end < len(s) && isBase64(s[end]) {
		end++
	}
	for n := 0; n < 2 && end < len(s) && s[end] == '='; n++ {
		end++
	}
	return start, end
}

// minWrappedLine is the shortest line base64 continues from on the next:
// tools wrap at 64 or 76 columns, YAML and JSON writers at others.
const minWrappedLine = 40

// unwrapped is a text with wrapped base64 joined: a line ending in at least
// minWrappedLine base64 characters and the next beginning with one (after
// its indentation) lose the line break and indentation between them.
type unwrapped struct {
	text string
	// pos is the position in the original of each byte of text; nil when
	// nothing was joined.
	pos []int
}

func unwrap(s string) unwrapped {
	if !strings.Contains(s, "\n") {
		return unwrapped{text: s}
	}
	var b []byte
	var pos []int
	run := 0 // base64 characters before i on its line
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\n' || c == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			j := i
			if c == '\r' {
				j++
			}
			k := j + 1
			for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
				k++
			}
			if run >= minWrappedLine && k < len(s) && isBase64(s[k]) {
				if pos == nil {
					b = append(make([]byte, 0, len(s)), s[:i]...)
					pos = make([]int, i, len(s))
					for n := range pos {
						pos[n] = n
					}
				}
				i = k - 1
				continue
			}
			run = 0
		} else if isBase64(c) {
			run++
		} else {
			run = 0
		}
		if pos != nil {
			b = append(b, c)
			pos = append(pos, i)
		}
	}
	if pos == nil {
		return unwrapped{text: s}
	}
	return unwrapped{text: string(b), pos: pos}
}

// original returns the span of the original text [start, end) of the
// joined text stands for.
func (u unwrapped) original(start, end int) span {
	if u.pos == nil {
		return span{start, end}
	}
	return span{u.pos[start], u.pos[end-1] + 1}
}

// A rule replaces, in each match of re, the first of groups that took
// part (0: the whole match) by Redacted, unless keep says the match is none.
type rule struct {
	re *regexp.Regexp
	// find, instead of re, returns the matches' [start, end).
	find   func(text string) [][]int
	groups []int
	// words are what a text must contain, in lower case, for re to match
	// it (one of them): re runs only on the lines that do, or, multiline,
	// on the whole text if it does. Regular expressions are what costs;
	// most lines of a tail have none of the words.
	words     []string
	multiline bool
	// cased rules match the text as it is, the others its lower case.
	cased bool
	// keep, when set, leaves a match as it is when it returns true.
	keep func(m []string) bool
	// wrapped extends a replaced base64 value over the lines it is wrapped on.
	wrapped bool
}

// secretKeyWords are in every key or flag that names a secret.
var secretKeyWords = []string{"token", "pass", "pwd", "secret", "key", "credential", "auth"}

const (
	// value of a key or flag: quoted (the quotes stay), or up to a blank or
	// separator; not a JSON object or list.
	valueRE = `(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|([^\s"',;{\[][^\s"',;]*))`
	// secretWords are the words of a key or flag that names a secret.
	secretWords = `(?:token|passw(?:or)?d|secret|api[_.-]?key|access[_.-]?key|private[_.-]?key|client[_.-]?key|passphrase|credentials?)`
)

// rules run on the text in lower case (asciiLower, the same offsets), so
// that their expressions need no case folding, which is slow; cased ones
// run on the text as it is.
var rules = []rule{
	// PEM private keys (RSA, EC, OpenSSH, PKCS#8, encrypted), and the rest
	// of a tail whose key is cut off by its end.
	{re: regexp.MustCompile(`(?s)-----begin [a-z0-9 ]*private key-----.*?(?:-----end [a-z0-9 ]*private key-----|\z)`), words: []string{"private key-----"}, multiline: true},
	// The end of a private key whose beginning the tail cut off: its base64
	// lines (headers of encrypted keys too) and END line.
	{find: pemEnds, words: []string{"-----end "}, multiline: true},
	// HTTP authorization, any scheme: headers, and Bearer credentials
	// anywhere (curl -H 'Authorization: Bearer …', error messages).
	{re: regexp.MustCompile(`\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:(?:basic|bearer|token|negotiate|digest)[ \t]+)?([^\s"']+)`), groups: []int{1}, wrapped: true,
		words: []string{"authorization"}},
	{re: regexp.MustCompile(`\bbearer(?:[ \t]+|%20)([a-z0-9._~+/=-]{8,})`), groups: []int{1}, words: []string{"bearer"}},
	// JWTs (ServiceAccount tokens, OIDC tokens): three base64url parts, the
	// first a JSON header.
	{re: regexp.MustCompile(`eyj[a-z0-9_-]+\.[a-z0-9_-]+\.[a-z0-9_-]*`), words: []string{"eyj"}},
	// Bootstrap tokens: [a-z0-9]{6}.[a-z0-9]{16}, in lower case only.
	{find: bootstrapTokens, words: []string{"."}, cased: true},
	// Credentials in URLs: https://user:password@host, and a long user
	// alone (a token as user name: https://<token>@host).
	{re: regexp.MustCompile(`[a-z][a-z0-9+.-]*://([^/\s:@]+:[^/\s@]+|[^/\s:@]{20,})@`), groups: []int{1}, words: []string{"://"}},
	// user:password of curl -u/-U/--user/--proxy-user and wget's --user:
	// the password goes (uid:gid of docker run -u stays).
	{re: regexp.MustCompile(`(?:^|\s)(?:-u[ \t]*|--(?:proxy-)?user(?:=|[ \t]+))["']?[^\s:"']*:([^\s"']+)`), groups: []int{1}, words: []string{"-u"},
		keep: func(m []string) bool { return allDigits(m[1]) }},
	// Flags that take a secret: --password X, --password=X, --token X,
	// --client-secret X, ... (not --password-stdin, --token-file).
	{re: regexp.MustCompile(`(?:^|\s)--?[a-z0-9-]*` + secretWords + `(?:=|[ \t]+)` + valueRE), groups: []int{1, 2, 3}, words: secretKeyWords},
	// -p of a registry login and of sshpass is a password.
	{re: regexp.MustCompile(`\b(?:login\b[^\n]*?[ \t]-p|sshpass[ \t]+-p)(?:=|[ \t]*)` + valueRE), groups: []int{1, 2, 3}, words: []string{"login", "sshpass"}},
	// key=value, key: value and "key": "value" of keys that name a secret,
	// in any case and with any separator (AWS_SECRET_ACCESS_KEY=…,
	// secret_key: …, Password = …, "auth": "…", client-key-data: …).
	{re: regexp.MustCompile(`\b(?:[a-z0-9_.-]*` + secretWords + `[a-z0-9_.-]*|auth|pwd|pass)["']?[ \t]*[:=][ \t]*` + valueRE), groups: []int{1, 2, 3}, wrapped: true, words: secretKeyWords},
}

// bootstrapTokens finds bootstrap tokens in text: [a-z0-9]{6}.[a-z0-9]{16}
// between word boundaries.
func bootstrapTokens(text string) [][]int {
	var out [][]int
	isWord := func(c byte) bool {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
	}
	isToken := func(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }
	for from := 0; ; {
		i := strings.IndexByte(text[from:], '.')
		if i < 0 {
			return out
		}
		i += from
		from = i + 1
		start, end := i-6, i+17
		if start < 0 || end > len(text) || start > 0 && isWord(text[start-1]) || end < len(text) && isWord(text[end]) {
			continue
		}
		ok := true
		for j := start; j < end && ok; j++ {
			ok = j == i || isToken(text[j])
		}
		if ok {
			out = append(out, []int{start, end})
			from = end
		}
	}
}

// pemEnds finds the END lines of private keys in text (lower case) and
// the key's lines before them: base64 lines of at least 16 characters (the
// one right before END may be shorter), and headers of encrypted keys.
func pemEnds(text string) [][]int {
	var out [][]int
	for from := 0; ; {
		i := strings.Index(text[from:], "-----end ")
		if i < 0 {
			return out
		}
		i += from
		eol := strings.IndexByte(text[i:], '\n')
		if eol < 0 {
			eol = len(text) - i
		}
		k := strings.Index(text[i:i+eol], "private key-----")
		if k < 0 {
			from = i + 1
			continue
		}
		end := i + k + len("private key-----")
		start := strings.LastIndexByte(text[:i], '\n') + 1
		for first := true; start > 0; first = false {
			prev := strings.LastIndexByte(text[:start-1], '\n') + 1
			line := strings.TrimLeft(strings.TrimSuffix(text[prev:start-1], "\r"), " \t")
			if !pemLine(line, first) {
				break
			}
			start = prev
		}
		out = append(out, []int{start, end})
		from = end
	}
}

// pemLine says whether line is one of a PEM body: base64 (of at least 16
// characters unless last), or a header (Proc-Type: 4,ENCRYPTED).
func pemLine(line string, last bool) bool {
	if strings.HasPrefix(line, "proc-type: ") || strings.HasPrefix(line, "dek-info: ") {
		return true
	}
	if line == "" || !last && len(line) < 16 {
		return false
	}
	for i := 0; i < len(line); i++ {
		if c := line[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// scrubPatterns replaces whatever looks like a credential.
func scrubPatterns(s string) string {
	lower := asciiLower(s)
	for i := range rules {
		if next := rules[i].apply(s, lower); next != s {
			s, lower = next, asciiLower(next)
		}
	}
	return s
}

// asciiLower is s with ASCII letters in lower case, byte for byte.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// apply replaces r's matches in s; lower is asciiLower(s).
func (r *rule) apply(s, lower string) string {
	if !containsAny(lower, r.words) {
		return s
	}
	text := lower
	if r.cased {
		text = s
	}
	var spans []span
	if r.multiline {
		spans = r.spans(text, 0, s, spans)
	} else {
		for start := 0; start < len(s); {
			end := strings.IndexByte(s[start:], '\n')
			if end < 0 {
				end = len(s)
			} else {
				end += start
			}
			if containsAny(lower[start:end], r.words) {
				spans = r.spans(text[start:end], start, s, spans)
			}
			start = end + 1
		}
	}
	return replaceSpans(s, spans)
}

// spans appends the spans of s to replace of r's matches in part, the
// text r matches (s or its lower case) from offset on.
func (r *rule) spans(part string, offset int, s string, spans []span) []span {
	var matches [][]int
	if r.find != nil {
		matches = r.find(part)
	} else {
		matches = r.re.FindAllStringSubmatchIndex(part, -1)
	}
	for _, m := range matches {
		start, end := m[0], m[1]
		if len(r.groups) > 0 {
			start = -1
			for _, g := range r.groups {
				if m[2*g] >= 0 {
					start, end = m[2*g], m[2*g+1]
					break
				}
			}
			if start < 0 || start == end {
				continue
			}
		}
		if s[offset+start:offset+end] == Redacted {
			continue
		}
		if r.keep != nil {
			groups := make([]string, len(m)/2)
			for g := range groups {
				if m[2*g] >= 0 {
					groups[g] = s[offset+m[2*g] : offset+m[2*g+1]]
				}
			}
			if r.keep(groups) {
				continue
			}
		}
		start, end = start+offset, end+offset
		if r.wrapped {
			end = wrappedEnd(s, start, end)
		}
		spans = append(spans, span{start, end})
	}
	return spans
}

// wrappedEnd extends a value [start, end) of s over the lines a base64
// value is wrapped on: while the line so far ends in minWrappedLine base64
// characters, the next line's base64 characters are part of it.
func wrappedEnd(s string, start, end int) int {
	for {
		run := 0
		for i := end - 1; i >= start && isBase64(s[i]); i-- {
			run++
		}
		if run < minWrappedLine || end >= len(s) {
			return end
		}
		next := end
		if s[next] == '\r' {
			next++
		}
		if next >= len(s) || s[next] != '\n' {
			return end
		}
		next++
		for next < len(s) && (s[next] == ' ' || s[next] == '\t') {
			next++
		}
		if next >= len(s) || !isBase64(s[next]) {
			return end
		}
		line := next
		for next < len(s) && isBase64(s[next]) {
			next++
		}
		for n := 0; n < 2 && next < len(s) && s[next] == '='; n++ {
			next++
		}
		if next < len(s) && s[next] != '\n' && s[next] != '\r' && s[next] != '"' && s[next] != '\'' {
			// Not a line of base64 alone: ordinary output.
			return end
		}
		start, end = line, next
	}
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
