package cloudinit

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	yaml3 "go.yaml.in/yaml/v3"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// decoded is what a node gets from a cloud-config, as the round-trip tests compare it.
type decoded struct {
	Hostname string                         `json:"hostname" yaml:"hostname"`
	SSHKeys  []string                       `json:"ssh_authorized_keys" yaml:"ssh_authorized_keys"`
	Files    []decodedFile                  `json:"write_files" yaml:"write_files"`
	RunCMD   []string                       `json:"runcmd" yaml:"runcmd"`
	BootCMD  []string                       `json:"bootcmd" yaml:"bootcmd"`
	CoreOS   *struct{ Units []decodedUnit } `json:"coreos" yaml:"coreos"`
}

type decodedFile struct {
	Path        string `json:"path" yaml:"path"`
	Permissions string `json:"permissions" yaml:"permissions"`
	Encoding    string `json:"encoding" yaml:"encoding"`
	Content     string `json:"content" yaml:"content"`
}

type decodedUnit struct {
	Name    string `json:"name" yaml:"name"`
	Content string `json:"content" yaml:"content"`
	DropIns []struct {
		Name    string `json:"name" yaml:"name"`
		Content string `json:"content" yaml:"content"`
	} `json:"drop-ins" yaml:"drop-ins"`
}

// wantDecoded is what cfg should decode to: every byte of every file, unit and command.
func wantDecoded(cfg osm.OSCConfig, opts Options) decoded {
	d := decoded{Hostname: opts.Hostname, SSHKeys: cfg.UserSSHKeys}
	for _, f := range cfg.Files {
		perm := f.Permissions
		if perm == 0 {
			perm = 644
		}
		d.Files = append(d.Files, decodedFile{Path: f.Path, Permissions: fmt.Sprintf("%04d", perm), Content: f.Content.Inline.Data})
	}
	if opts.Hostname != "" {
		d.Files = append(d.Files, decodedFile{Path: machineNameFile, Permissions: "0600", Content: opts.Hostname})
	}
	if m := cfg.CloudInitModules; m != nil {
		d.RunCMD, d.BootCMD = m.RunCMD, m.BootCMD
	}
	for _, u := range cfg.Units {
		if d.CoreOS == nil {
			d.CoreOS = &struct{ Units []decodedUnit }{}
		}
		du := decodedUnit{Name: u.Name}
		if u.Content != nil {
			du.Content = *u.Content
		}
		for _, di := range u.DropIns {
			du.DropIns = append(du.DropIns, struct {
				Name    string `json:"name" yaml:"name"`
				Content string `json:"content" yaml:"content"`
			}{di.Name, di.Content})
		}
		d.CoreOS.Units = append(d.CoreOS.Units, du)
	}
	return d
}

// TestRoundTrip decodes our YAML with a YAML 1.2 parser (as Go tools would) and
// gets back exactly the files, modes, contents, units and commands.
func TestRoundTrip(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Encode(tc.cfg, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got decoded
			if err := yaml3.Unmarshal(out, &got); err != nil {
				t.Fatalf("decode: %v\n%s", err, out)
			}
			for i, f := range got.Files {
				if f.Encoding == "b64" {
					b, err := base64.StdEncoding.DecodeString(f.Content)
					if err != nil {
						t.Fatalf("%s: %v", f.Path, err)
					}
					got.Files[i].Content, got.Files[i].Encoding = string(b), ""
				}
			}
			compareDecoded(t, got, wantDecoded(tc.cfg, tc.opts))
		})
	}
}

// TestRoundTripPyYAML does the same with PyYAML, the parser cloud-init uses
// (YAML 1.1, with its own ideas about line breaks and booleans).
func TestRoundTripPyYAML(t *testing.T) {
	python := requireTool(t, "python3")
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := Encode(tc.cfg, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "user-data")
			if err := os.WriteFile(path, out, 0o600); err != nil {
				t.Fatal(err)
			}
			js, err := exec.Command(python, "testdata/decode.py", path).Output()
			if err != nil {
				t.Fatalf("decode.py: %v: %s", err, stderr(err))
			}
			var got decoded
			if err := json.Unmarshal(js, &got); err != nil {
				t.Fatalf("%v: %s", err, js)
			}
			for i, f := range got.Files {
				b, err := base64.StdEncoding.DecodeString(f.Content)
				if err != nil {
					t.Fatal(err)
				}
				got.Files[i].Content = string(b)
			}
			compareDecoded(t, got, wantDecoded(tc.cfg, tc.opts))
		})
	}
}

func compareDecoded(t *testing.T, got, want decoded) {
	t.Helper()
	if len(got.Files) != len(want.Files) {
		t.Fatalf("got %d files, want %d", len(got.Files), len(want.Files))
	}
	for i := range want.Files {
		if got.Files[i] != want.Files[i] {
			t.Errorf("file %d:\n got %+q\nwant %+q", i, got.Files[i], want.Files[i])
		}
	}
	got.Files, want.Files = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
