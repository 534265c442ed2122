package cloudinit

import (
	"encoding/base64"
	"testing"
	"unicode/utf8"

	yaml3 "go.yaml.in/yaml/v3"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// FuzzEncode checks that any file content, path, command and unit survives the
// encoding: the output decodes to exactly the input, or Encode reports invalid UTF-8.
func FuzzEncode(f *testing.F) {
	f.Add("/etc/x", "a: b\n  c\n", "echo 'hi'", "[Unit]\n\n[Service]\n", false)
	f.Add("/etc/y", " \t\n\n", "multi\nline", "", true)
	f.Add("/etc/z", "\u2028\r\n\x00", "#", "\t", false)
	f.Fuzz(func(t *testing.T, path, data, cmd, unit string, b64 bool) {
		enc := ""
		if b64 {
			enc = "b64"
		}
		cfg := osm.OSCConfig{
			Files:            []osm.File{file(path, 644, enc, data)},
			Units:            []osm.Unit{{Name: "x.service", Content: &unit}},
			CloudInitModules: &osm.CloudInitModule{RunCMD: []string{cmd}},
		}
		out, err := Encode(cfg, Options{})
		if err != nil {
			if utf8.ValidString(path) && utf8.ValidString(cmd) && utf8.ValidString(unit) {
				t.Fatalf("unexpected error: %v", err)
			}
			return
		}
		var got decoded
		if err := yaml3.Unmarshal(out, &got); err != nil {
			t.Fatalf("decode: %v\n%s", err, out)
		}
		if len(got.Files) != 1 || got.RunCMD[0] != cmd || got.CoreOS.Units[0].Content != unit {
			t.Fatalf("got %+v\n%s", got, out)
		}
		content := got.Files[0].Content
		if got.Files[0].Encoding == "b64" {
			raw, err := base64.StdEncoding.DecodeString(content)
			if err != nil {
				t.Fatal(err)
			}
			content = string(raw)
		}
		if got.Files[0].Path != path || content != data {
			t.Fatalf("file %q %q, want %q %q\n%s", got.Files[0].Path, content, path, data, out)
		}
	})
}
