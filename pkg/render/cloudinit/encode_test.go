package cloudinit

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// tricky holds contents a hand-written emitter could get wrong.
var tricky = []osm.File{
	file("/etc/quotes", 644, "", "it's \"quoted\": {{ .x }} # not a comment\n"),
	file("/etc/no-final-newline", 600, "", "key: value"),
	file("/etc/leading-space", 644, "", "  indented first line\nsecond\n"),
	file("/etc/blank-lines", 644, "", "a\n\nb\n"),
	file("/etc/trailing-newlines", 644, "", "a\n\n"),
	file("/etc/spaces-only-line", 644, "", "a\n   \nb"),
	file("/etc/crlf", 644, "", "a\r\nb\r\n"),
	file("/etc/unicode", 644, "", "grüße – 日本語 🚀\n"),
	file("/etc/line-separator", 644, "", "a\u2028b\n"),
	file("/etc/tab", 644, "", "\tx\n"),
	file("/etc/binary", 644, "", "\x00\xff\xfe"),
	file("/etc/document-markers", 644, "", "---\n...\n- item\n"),
	file("/etc/empty", 644, "", ""),
	file("/opt/bin/b64", 755, "b64", "#!/bin/bash\necho '<MACHINE_NAME>'\n"),
	file("/etc/sticky dir/it's", 1755, "", "x\n"),
	file("/etc/default-mode", 0, "", "x\n"),
}

var goldenCases = []struct {
	name string
	cfg  osm.OSCConfig
	opts Options
}{
	{name: "empty"},
	{
		name: "bootstrap-hostname",
		cfg: osm.OSCConfig{
			UserSSHKeys:      []string{"ssh-rsa AAAA user@host", "ssh-ed25519 BBBB it's me"},
			Files:            []osm.File{file("/opt/bin/bootstrap", 755, "b64", "#!/bin/bash\necho hi\n")},
			CloudInitModules: &osm.CloudInitModule{RunCMD: []string{"systemctl restart bootstrap.service", "echo a: b"}},
		},
		opts: Options{Hostname: machinecontroller.MachineNamePlaceholder, DistUpgradeOnBoot: true},
	},
	{name: "tricky-files", cfg: osm.OSCConfig{Files: tricky}},
	{
		name: "units",
		cfg: osm.OSCConfig{Units: []osm.Unit{
			{Name: "setup.service", Enable: ptr(true), Content: ptr("[Unit]\nAfter=network-online.target\n\n[Service]\nExecStart=/opt/bin/setup\n")},
			{Name: "update-engine.service", Mask: ptr(true)},
			{Name: "kubelet.service", Enable: ptr(false), DropIns: []osm.DropIn{{Name: "10-env.conf", Content: "[Service]\nEnvironment=A=b\n"}}},
		}},
	},
	{
		name: "modules",
		cfg: osm.OSCConfig{CloudInitModules: &osm.CloudInitModule{
			BootCMD: []string{"echo boot", "multi\nline"},
			RunCMD:  []string{"echo run"},
			RHSubscription: map[string]string{
				"username": "user", "password": "p'ss: word", "auto-attach": "true",
				"org": "", "add-pool": "[pool-1, pool-2]", "service-level": "self-support",
			},
			YumRepos: map[string]map[string]string{
				"epel":  {"baseurl": "https://example.com/epel/$releasever", "enabled": "true", "gpgcheck": "1", "name": "EPEL: extra", "priority": ""},
				"empty": {"baseurl": ""},
			},
			YumRepoDir: "/etc/yum.repos.d",
		}},
	},
}

func TestEncodeGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Encode(tc.cfg, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("output differs from %s (run go test -update if intended):\n%s", golden, got)
			}
			for i, line := range strings.Split(string(got), "\n") {
				if strings.TrimSpace(line) == "" && i < strings.Count(string(got), "\n") {
					t.Errorf("line %d is blank; machine-controller would drop it", i+1)
				}
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  osm.OSCConfig
		want string
	}{
		{"decimal permissions", osm.OSCConfig{Files: []osm.File{file("/x", 999, "", "x")}}, "file /x: permissions 999 are not octal digits"},
		{"large permissions", osm.OSCConfig{Files: []osm.File{file("/x", 17777, "", "x")}}, "file /x: permissions 17777 are not 3 or 4 octal digits"},
		{"unknown encoding", osm.OSCConfig{Files: []osm.File{file("/x", 644, "gzip", "x")}}, `file /x: unknown encoding "gzip"`},
		{"invalid path", osm.OSCConfig{Files: []osm.File{file("/\xff", 644, "", "x")}}, "path: not valid UTF-8"},
		{"invalid runcmd", osm.OSCConfig{CloudInitModules: &osm.CloudInitModule{RunCMD: []string{"ok", "\xff"}}}, "runcmd[1]: not valid UTF-8"},
		{"auto-attach", osm.OSCConfig{CloudInitModules: &osm.CloudInitModule{RHSubscription: map[string]string{"auto-attach": "maybe"}}}, `rh_subscription auto-attach: "maybe" is not a boolean`},
		{"unit content", osm.OSCConfig{Units: []osm.Unit{{Name: "a.service", Content: ptr("\xff")}}}, "unit a.service: content: not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Encode(tc.cfg, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestHostname(t *testing.T) {
	for _, tc := range []struct {
		payload osm.PayloadType
		cloud   string
		want    string
	}{
		{osm.PayloadTypeBootstrap, "openstack", machinecontroller.MachineNamePlaceholder},
		{osm.PayloadTypeBootstrap, "aws", ""},
		{osm.PayloadTypeBootstrap, "edge", "md-1"},
		{osm.PayloadTypeProvisioning, "openstack", ""},
	} {
		if got := Hostname(tc.payload, tc.cloud, "md-1"); got != tc.want {
			t.Errorf("Hostname(%s, %s) = %q, want %q", tc.payload, tc.cloud, got, tc.want)
		}
	}
}
