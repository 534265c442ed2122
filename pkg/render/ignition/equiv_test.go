package ignition

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// compareWithButane encodes cfg both ways. The direct encoder must write
// butane's exact bytes whenever it takes a config (into a buffer of exactly
// directLen bytes), and must not take one that butane rejects (with an error
// or a warning). It tells whether the direct encoder took cfg and whether
// butane accepted it.
func compareWithButane(t *testing.T, cfg osm.OSCConfig, opts Options) (direct, butaneOK bool) {
	t.Helper()
	c, err := newConfig(&cfg, opts)
	if err != nil {
		return false, false // an error of both paths: neither sees the config
	}
	want, werr := encodeButane(&c)
	if !accepted(&c) {
		return false, werr == nil
	}
	if werr != nil {
		t.Fatalf("direct encoder takes a config butane rejects (%v):\n%+v", werr, cfg)
	}
	got := encodeDirect(&c)
	if !bytes.Equal(got, want) {
		t.Fatalf("direct encoder differs from butane:\ngot  %s\nwant %s", got, want)
	}
	if n := directLen(&c); n != len(got) || cap(got) != len(got) {
		t.Fatalf("directLen %d, but the output has length %d and capacity %d", n, len(got), cap(got))
	}
	return true, true
}

func unitWith(name string, enable, mask *bool, content *string, dropIns ...osm.DropIn) osm.Unit {
	return osm.Unit{Name: name, Enable: enable, Mask: mask, Content: content, DropIns: dropIns}
}

const installed = "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"

// equivalenceCases are configs the direct encoder writes (valid) and configs
// butane rejects, each for a check of accepted.
var equivalenceCases = []struct {
	name  string
	cfg   osm.OSCConfig
	opts  Options
	valid bool
}{
	{name: "empty", valid: true},
	{name: "golden bootstrap", cfg: goldenCases[1].cfg, opts: goldenCases[1].opts, valid: true},
	{name: "hostname only", opts: Options{Hostname: "node-1"}, valid: true},
	{name: "escapes in strings", valid: true, cfg: osm.OSCConfig{
		UserSSHKeys: []string{"ssh-ed25519 <A&B> \"q\" \\ \u2028\u2029 \x01\x7f", "bad utf8 \xff\xfe end", ""},
		Files: []osm.File{
			file("/etc/ü<&>\"'\\\t", 644, "", "x\u2028<MACHINE_NAME>\x00"),
			file("/etc/b64", 755, "b64", strings.Repeat("0123456789", 100)),
		},
		Units: []osm.Unit{
			unitWith("a-\u00e9\u2029.service", ptr(true), nil, ptr("[Unit]\nDescription=<&> \"x\" \\ \t\x1f\xff\r\n"+installed)),
			unitWith("b.service", nil, nil, nil, osm.DropIn{Name: "1 \"q\".conf", Content: "[Service]\nEnvironment=\"A=<b>\"\n"}),
		},
	}},
	{name: "false and empty fields", valid: true, cfg: osm.OSCConfig{
		Units: []osm.Unit{
			unitWith("a.service", ptr(false), ptr(false), ptr("")),
			unitWith("b.service", ptr(true), nil, ptr("")),
			unitWith("c.service", nil, ptr(true), nil, osm.DropIn{Name: "e.conf"}, osm.DropIn{Name: "f.conf", Content: "[Service]\n"}),
			unitWith("d.timer", ptr(false), nil, ptr("[Timer]\nOnCalendar=daily\n")),
		},
	}},
	{name: "unit file without unit contents", valid: true, cfg: osm.OSCConfig{
		Files: []osm.File{file("/etc/systemd/system/x.service", 644, "", installed), file("/etc/systemd/system/x.service.d/a.conf", 644, "", "")},
		Units: []osm.Unit{unitWith("x.service", ptr(true), nil, ptr(""), osm.DropIn{Name: "a.conf"})},
	}},
	{name: "instance with install section", valid: true, cfg: osm.OSCConfig{
		Units: []osm.Unit{unitWith("getty@.service", nil, nil, ptr(installed)), unitWith("getty@tty1.service", ptr(true), nil, nil)},
	}},
	{name: "instance without template", valid: true, cfg: osm.OSCConfig{
		Units: []osm.Unit{unitWith("x@y.service", ptr(true), nil, nil)},
	}},

	{name: "relative path", cfg: osm.OSCConfig{Files: []osm.File{file("etc/x", 644, "", "")}}},
	{name: "empty path", cfg: osm.OSCConfig{Files: []osm.File{file("", 644, "", "")}}},
	{name: "dirty path", cfg: osm.OSCConfig{Files: []osm.File{file("/etc/../x", 644, "", "")}}},
	{name: "trailing slash", cfg: osm.OSCConfig{Files: []osm.File{file("/etc/x/", 644, "", "")}}},
	{name: "double slash", cfg: osm.OSCConfig{Files: []osm.File{file("//etc/x", 644, "", "")}}},
	{name: "duplicate path", cfg: osm.OSCConfig{Files: []osm.File{file("/x", 644, "", "a"), file("/x", 600, "", "b")}}},
	{name: "duplicate of machine-name", cfg: osm.OSCConfig{Files: []osm.File{file(machineNameFile, 644, "", "a")}}, opts: Options{Hostname: "h"}},
	{name: "special bits", cfg: osm.OSCConfig{Files: []osm.File{file("/x", 4755, "", "")}}},
	{name: "decimal-looking mode", cfg: osm.OSCConfig{Files: []osm.File{file("/x", 1204, "", "")}}},
	{name: "file where a unit goes", cfg: osm.OSCConfig{
		Files: []osm.File{file("/etc/systemd/system/x.service", 644, "", "")},
		Units: []osm.Unit{unitWith("x.service", nil, nil, ptr("[Service]\n"))},
	}},
	{name: "file where a drop-in goes", cfg: osm.OSCConfig{
		Files: []osm.File{file("/etc/systemd/system/x.service.d/a.conf", 644, "", "")},
		Units: []osm.Unit{unitWith("x.service", nil, nil, nil, osm.DropIn{Name: "a.conf", Content: "[Service]\n"})},
	}},
	{name: "unit without type", cfg: osm.OSCConfig{Units: []osm.Unit{unitWith("setup", nil, nil, nil)}}},
	{name: "unit with empty name", cfg: osm.OSCConfig{Units: []osm.Unit{unitWith("", nil, nil, nil)}}},
	{name: "duplicate unit", cfg: osm.OSCConfig{Units: []osm.Unit{unitWith("a.service", nil, ptr(true), nil), unitWith("a.service", nil, nil, nil)}}},
	{name: "enabled unit without install section", cfg: osm.OSCConfig{Units: []osm.Unit{unitWith("a.service", ptr(true), nil, ptr("[Service]\nExecStart=/bin/true\n"))}}},
	{name: "unparsable unit", cfg: osm.OSCConfig{Units: []osm.Unit{unitWith("a.service", nil, nil, ptr("[Service]\nExecStart="+strings.Repeat("x", 3000)+"\n"))}}},
	{name: "unparsable section", cfg: osm.OSCConfig{Units: []osm.Unit{unitWith("a.service", nil, nil, ptr("[Service\n"))}}},
	{name: "drop-in without .conf", cfg: osm.OSCConfig{Units: []osm.Unit{unitWith("a.service", nil, nil, nil, osm.DropIn{Name: "a.txt"})}}},
	{name: "unparsable drop-in", cfg: osm.OSCConfig{Units: []osm.Unit{unitWith("a.service", nil, nil, nil, osm.DropIn{Name: "a.conf", Content: "[Service\n"})}}},
	{name: "duplicate drop-in", cfg: osm.OSCConfig{Units: []osm.Unit{unitWith("a.service", nil, nil, nil, osm.DropIn{Name: "a.conf"}, osm.DropIn{Name: "a.conf"})}}},
	{name: "instance of template without install section", cfg: osm.OSCConfig{
		Units: []osm.Unit{unitWith("x@.service", nil, nil, ptr("[Service]\nExecStart=/bin/true\n")), unitWith("x@y.service", ptr(true), nil, nil)},
	}},
	{name: "duplicate SSH key", cfg: osm.OSCConfig{UserSSHKeys: []string{"ssh-rsa A", "ssh-rsa B", "ssh-rsa A"}}},
}

// TestDirectMatchesButane: the direct encoder writes butane's bytes for
// valid configs and leaves every config butane rejects to butane.
func TestDirectMatchesButane(t *testing.T) {
	for _, tc := range equivalenceCases {
		t.Run(tc.name, func(t *testing.T) {
			direct, butaneOK := compareWithButane(t, tc.cfg, tc.opts)
			if butaneOK != tc.valid {
				t.Fatalf("butane accepts the config: %t, want %t", butaneOK, tc.valid)
			}
			if direct != tc.valid {
				t.Errorf("direct encoder takes the config: %t, want %t", direct, tc.valid)
			}
		})
	}
}

// TestDirectModes covers every permission value an OSP can hold: modes with
// special bits and modes that look decimal are butane's warnings.
func TestDirectModes(t *testing.T) {
	declined := 0
	for mode := 0; mode <= 0o7777; mode++ {
		perm := int32(0)
		if _, err := fmt.Sscanf(fmt.Sprintf("%o", mode), "%d", &perm); err != nil {
			t.Fatal(err)
		}
		cfg := osm.OSCConfig{Files: []osm.File{file("/x", perm, "", "x")}}
		direct, butaneOK := compareWithButane(t, cfg, Options{})
		if direct != butaneOK {
			t.Fatalf("mode %04o: direct %t, butane %t", mode, direct, butaneOK)
		}
		if !direct {
			declined++
		}
	}
	t.Logf("%d of 4096 modes are left to butane", declined)
}
