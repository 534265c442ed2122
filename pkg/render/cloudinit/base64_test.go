package cloudinit

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestAppendBase64(t *testing.T) {
	src := strings.Repeat("a\xff\x00\x7f<MACHINE_NAME>", 5)
	for n := range len(src) {
		want := "prefix" + base64.StdEncoding.EncodeToString([]byte(src[:n]))
		if got := string(appendBase64([]byte("prefix"), src[:n])); got != want {
			t.Fatalf("length %d: got %q, want %q", n, got, want)
		}
	}
}

func FuzzAppendBase64(f *testing.F) {
	f.Add("", "hello, world")
	f.Fuzz(func(t *testing.T, prefix, src string) {
		want := prefix + base64.StdEncoding.EncodeToString([]byte(src))
		if got := string(appendBase64([]byte(prefix), src)); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}
