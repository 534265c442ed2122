package bootreports

import (
	"encoding/base64"
	"strings"
	"testing"
)

// FuzzScrub: Scrub never panics, is idempotent, adds nothing but redaction
// markers, and a known value inserted anywhere into the text never
// survives, in plain or base64 form.
func FuzzScrub(f *testing.F) {
	for _, tc := range scrubCorpus {
		f.Add(tc.tail, "Blue-Moon-Over-Riga", uint16(7))
	}
	for _, line := range ordinaryLines {
		f.Add(line, fetchJWT, uint16(3))
	}
	f.Add("password=\"\" token: '' x", "k7x2pq.q8w7e6r5t4y3u2i1", uint16(0))
	f.Fuzz(func(t *testing.T, text, value string, at uint16) {
		got := Scrub(text, nil)
		if again := Scrub(got, nil); again != got {
			t.Fatalf("not idempotent:\n%q\n%q\n%q", text, got, again)
		}
		if rest := len(got) - strings.Count(got, Redacted)*len(Redacted); rest > len(text) {
			t.Fatalf("lengthened beyond its markers: %d of %d bytes:\n%q\n%q", rest, len(text), text, got)
		}
		if len(value) < minKnownLen || strings.Contains(Redacted, value) {
			return
		}
		known := NewKnown(value)
		i := int(at) % (len(text) + 1)
		for _, form := range []string{value, base64.StdEncoding.EncodeToString([]byte(value))} {
			in := text[:i] + form + text[i:]
			got := Scrub(in, known)
			if strings.Contains(got, value) {
				t.Fatalf("the known value survived:\n%q\n%q", in, got)
			}
			if form != value && strings.Contains(got, innerBase64(base64.StdEncoding, value, 0)) {
				t.Fatalf("its base64 survived:\n%q\n%q", in, got)
			}
			if again := Scrub(got, known); again != got {
				t.Fatalf("not idempotent with a known value:\n%q\n%q\n%q", in, got, again)
			}
		}
	})
}

// BenchmarkScrub scrubs 4 KiB log tails with the known values of an MD:
// one of ordinary output, one of the corpus' credentials.
func BenchmarkScrub(b *testing.B) {
	var credentials []string
	for _, tc := range scrubCorpus {
		credentials = append(credentials, strings.Split(tc.tail, "\n")...)
	}
	for _, bc := range []struct {
		name  string
		lines []string
	}{{"ordinary", ordinaryLines}, {"credentials", append(credentials, ordinaryLines...)}} {
		var tail strings.Builder
		for i := 0; tail.Len() < MaxLogTailBytes; i++ {
			tail.WriteString(bc.lines[i%len(bc.lines)] + "\n")
		}
		s := tail.String()[:MaxLogTailBytes]
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				known := NewKnown("k7x2pq.q8w7e6r5t4y3u2i1", "q8w7e6r5t4y3u2i1", fetchJWT, "Blue-Moon-Over-Riga", "robot:Blue-Moon-Over-Riga")
				Scrub(s, known)
			}
		})
	}
}
