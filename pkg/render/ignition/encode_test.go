package ignition

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v3_3 "github.com/coreos/ignition/v2/config/v3_3"
	"github.com/coreos/ignition/v2/config/v3_3/types"
	"github.com/vincent-petithory/dataurl"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func ptr[T any](v T) *T { return &v }

func file(path string, perm int32, encoding, data string) osm.File {
	return osm.File{Path: path, Permissions: perm, Content: osm.FileContent{
		Inline: &osm.FileContentInline{Encoding: encoding, Data: data},
	}}
}

var goldenCases = []struct {
	name string
	cfg  osm.OSCConfig
	opts Options
}{
	{name: "empty"},
	{
		name: "bootstrap",
		cfg: osm.OSCConfig{
			UserSSHKeys: []string{"ssh-rsa AAAA user@host", "ssh-ed25519 BBBB other"},
			Files: []osm.File{
				file("/opt/bin/bootstrap", 755, "b64", "#!/bin/bash\nhostnamectl set-hostname <MACHINE_NAME>\n"),
				file("/etc/quotes", 644, "", "it's \"quoted\": {{ .x }} — ünïcode\n"),
				file("/etc/binary", 600, "", "\x00\xff\xfe"),
				file("/etc/empty", 0, "", ""),
			},
			Units: []osm.Unit{
				{Name: "bootstrap.service", Enable: ptr(true), Content: ptr("[Unit]\nDescription=<MACHINE_NAME> & co\n[Service]\nType=oneshot\nExecStart=/opt/bin/bootstrap\n[Install]\nWantedBy=multi-user.target\n")},
				{Name: "update-engine.service", Mask: ptr(true)},
				{Name: "containerd.service", Enable: ptr(true), DropIns: []osm.DropIn{{Name: "10-env.conf", Content: "[Service]\nEnvironment=A=b\n"}}},
			},
		},
		opts: Options{Hostname: machinecontroller.MachineNamePlaceholder},
	},
}

func TestEncodeGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Encode(tc.cfg, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := json.Indent(&got, out, "", "  "); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tc.name+".json")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got.String() != string(want) {
				t.Errorf("output differs from %s (run go test -update if intended):\n%s", golden, got.Bytes())
			}
		})
	}
}

// parse parses out as Ignition spec 3.3 and fails on any report entry.
func parse(t *testing.T, out []byte) types.Config {
	t.Helper()
	cfg, r, err := v3_3.Parse(out)
	if err != nil || len(r.Entries) > 0 {
		t.Fatalf("ignition parse: %v: %s\n%s", err, r.String(), out)
	}
	if cfg.Ignition.Version != SpecVersion {
		t.Fatalf("version %s, want %s", cfg.Ignition.Version, SpecVersion)
	}
	return cfg
}

// TestRoundTrip parses our output as Ignition and gets back every file's exact
// bytes and mode, the units and the SSH keys.
func TestRoundTrip(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Encode(tc.cfg, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			cfg := parse(t, out)
			want := tc.cfg.Files
			if tc.opts.Hostname != "" {
				want = append(want[:len(want):len(want)], file(machineNameFile, 600, "", tc.opts.Hostname))
			}
			if len(cfg.Storage.Files) != len(want) {
				t.Fatalf("got %d files, want %d", len(cfg.Storage.Files), len(want))
			}
			for i, f := range cfg.Storage.Files {
				data, err := dataurl.DecodeString(*f.Contents.Source)
				if err != nil {
					t.Fatalf("%s: %v", f.Path, err)
				}
				mode, _ := octal(want[i].Permissions)
				if f.Path != want[i].Path || string(data.Data) != want[i].Content.Inline.Data || *f.Mode != mode || f.Overwrite == nil || !*f.Overwrite {
					t.Errorf("file %d: got %s mode %o %q, want %s mode %o %q", i, f.Path, *f.Mode, data.Data, want[i].Path, mode, want[i].Content.Inline.Data)
				}
			}
			if len(cfg.Systemd.Units) != len(tc.cfg.Units) {
				t.Fatalf("got %d units, want %d", len(cfg.Systemd.Units), len(tc.cfg.Units))
			}
			for i, u := range cfg.Systemd.Units {
				w := tc.cfg.Units[i]
				if u.Name != w.Name || !same(u.Contents, w.Content) || !same(u.Enabled, w.Enable) || !same(u.Mask, w.Mask) || len(u.Dropins) != len(w.DropIns) {
					t.Errorf("unit %d: got %+v, want %+v", i, u, w)
				}
			}
			var keys []string
			for _, u := range cfg.Passwd.Users {
				for _, k := range u.SSHAuthorizedKeys {
					keys = append(keys, u.Name+" "+string(k))
				}
			}
			for i, k := range tc.cfg.UserSSHKeys {
				if i >= len(keys) || keys[i] != "core "+k {
					t.Errorf("ssh keys: got %q, want %q for user core", keys, tc.cfg.UserSSHKeys)
				}
			}
		})
	}
}

func same[T comparable](a, b *T) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// TestMachineNamePlaceholder does what machine-controller does to the user-data
// and checks that the machine's name lands in every place that had the placeholder.
func TestMachineNamePlaceholder(t *testing.T) {
	out, err := Encode(goldenCases[1].cfg, goldenCases[1].opts)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(out), "<MACHINE_NAME>", "node-a1")
	s = strings.ReplaceAll(s, "%3CMACHINE_NAME%3E", "node-a1")
	if strings.Contains(s, "MACHINE_NAME") {
		t.Fatalf("placeholder left after replacement: %s", s)
	}
	cfg := parse(t, []byte(s))
	contents := map[string]string{}
	for _, f := range cfg.Storage.Files {
		d, err := dataurl.DecodeString(*f.Contents.Source)
		if err != nil {
			t.Fatal(err)
		}
		contents[f.Path] = string(d.Data)
	}
	if got := contents[machineNameFile]; got != "node-a1" {
		t.Errorf("%s = %q, want node-a1", machineNameFile, got)
	}
	if got := contents["/opt/bin/bootstrap"]; !strings.Contains(got, "set-hostname node-a1\n") {
		t.Errorf("/opt/bin/bootstrap = %q, want the machine name in it", got)
	}
	if got := *cfg.Systemd.Units[0].Contents; !strings.Contains(got, "Description=node-a1 & co") {
		t.Errorf("unit contents = %q, want the machine name in it", got)
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  osm.OSCConfig
		want string
	}{
		{"decimal permissions", osm.OSCConfig{Files: []osm.File{file("/x", 999, "", "x")}}, "file /x: permissions 999 are not octal digits"},
		{"unknown encoding", osm.OSCConfig{Files: []osm.File{file("/x", 644, "gzip", "x")}}, `file /x: unknown encoding "gzip"`},
		{"relative path", osm.OSCConfig{Files: []osm.File{file("etc/x", 644, "", "x")}}, "butane translation failed: error at $.storage.files.0.path"},
		{"unit without type", osm.OSCConfig{Units: []osm.Unit{{Name: "setup", Content: ptr("[Service]\n")}}}, "butane translation failed: error at $.systemd.units.0.name"},
		{"duplicate file", osm.OSCConfig{Files: []osm.File{file("/x", 644, "", "a"), file("/x", 644, "", "b")}}, "butane translation failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Encode(tc.cfg, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestPercentDataURL(t *testing.T) {
	s := "a<MACHINE_NAME> b/c\n\x00\xff-_.!~*'()"
	u := percentDataURL(s)
	if want := "data:,a%3CMACHINE_NAME%3E%20b%2Fc%0A%00%FF-_.!~*'()"; u != want {
		t.Errorf("got %s, want %s", u, want)
	}
	if d, err := dataurl.DecodeString(u); err != nil || string(d.Data) != s {
		t.Errorf("decodes to %q, %v; want %q", d.Data, err, s)
	}
}
