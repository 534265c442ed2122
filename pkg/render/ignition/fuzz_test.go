package ignition

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clarketm/json"
	"github.com/coreos/ignition/v2/config/v3_3/types"
	"github.com/coreos/vcontext/path"
	"github.com/vincent-petithory/dataurl"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// ospPaths are the default OSPs of this repository and upstream's (when
// ../shared/upstream-osm is there): their configs as Ignition, whatever their
// provisioning utility, are the realistic inputs of the equivalence tests.
func ospPaths(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob("../../../artifacts/default-osps/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no default OSPs: %v", err)
	}
	upstream, _ := filepath.Glob(filepath.Join(filepath.Dir(flatcarOSP), "*.yaml"))
	return append(paths, upstream...)
}

// ospName is path's file name, with "upstream/" for upstream's.
func ospName(path string) string {
	if strings.Contains(path, "upstream-osm") {
		return "upstream/" + filepath.Base(path)
	}
	return filepath.Base(path)
}

// TestDefaultOSPsDirect: both configs of every default OSP, with and without
// a hostname, come out of the direct encoder with butane's bytes.
func TestDefaultOSPsDirect(t *testing.T) {
	for _, p := range ospPaths(t) {
		boot, prov := loadOSPConfigs(t, p)
		for name, cfg := range map[string]osm.OSCConfig{"bootstrap": boot, "provisioning": prov} {
			for _, opts := range []Options{{}, {Hostname: machinecontroller.MachineNamePlaceholder}, {Hostname: "md-1"}} {
				t.Run(ospName(p)+"/"+name+"/"+opts.Hostname, func(t *testing.T) {
					direct, butaneOK := compareWithButane(t, cfg, opts)
					switch {
					case strings.Contains(p, "flatcar") && !strings.Contains(p, "cloud-init") && !direct:
						t.Errorf("a Flatcar OSP's config goes through butane (butane accepts it: %t)", butaneOK)
					case !direct:
						t.Logf("goes through butane (butane accepts it: %t)", butaneOK)
					}
				})
			}
		}
	}
}

// FuzzDirectMatchesButane builds configs from text: files (path lines, two
// bytes of mode each, contents split by \x1e), units (name lines, a flag byte
// each, contents split by \x1e, drop-in name lines), SSH key lines and a
// hostname. Whatever the config, the direct encoder writes butane's bytes or
// leaves it to butane, and never takes a config butane rejects.
func FuzzDirectMatchesButane(f *testing.F) {
	add := func(cfg osm.OSCConfig, opts Options) {
		a := fuzzArgs(cfg, opts)
		f.Add(a.paths, a.modes, a.contents, a.units, a.flags, a.unitContents, a.dropIns, a.keys, a.hostname)
	}
	for _, tc := range equivalenceCases {
		add(tc.cfg, tc.opts)
	}
	for _, p := range ospPaths(f) {
		boot, prov := loadOSPConfigs(f, p)
		add(boot, Options{Hostname: machinecontroller.MachineNamePlaceholder})
		add(prov, Options{})
	}
	f.Fuzz(func(t *testing.T, paths string, modes []byte, contents, units string, flags []byte, unitContents, dropIns, keys, hostname string) {
		cfg := fuzzConfig(paths, modes, contents, units, flags, unitContents, dropIns, keys)
		compareWithButane(t, cfg, Options{Hostname: hostname})
	})
}

type fuzzInput struct {
	paths                                 string
	modes                                 []byte
	contents, units                       string
	flags                                 []byte
	unitContents, dropIns, keys, hostname string
}

// fuzzArgs are FuzzDirectMatchesButane's arguments for cfg (up to three
// drop-ins a unit).
func fuzzArgs(cfg osm.OSCConfig, opts Options) fuzzInput {
	var p, c, u, uc, d []string
	var modes, flags []byte
	for _, f := range cfg.Files {
		p = append(p, f.Path)
		m, _ := strconv.ParseInt(strconv.Itoa(int(f.Permissions)), 8, 32)
		modes = append(modes, byte(m>>8), byte(m))
		var data string
		if f.Content.Inline != nil {
			data = f.Content.Inline.Data
		}
		c = append(c, data)
	}
	for _, unit := range cfg.Units {
		u = append(u, unit.Name)
		var flag byte
		if unit.Enable != nil {
			flag |= 1 | b2i(*unit.Enable)<<1
		}
		if unit.Mask != nil {
			flag |= 4 | b2i(*unit.Mask)<<3
		}
		if unit.Content != nil {
			flag |= 16
			uc = append(uc, *unit.Content)
		}
		flag |= byte(min(len(unit.DropIns), 3)) << 5
		for _, di := range unit.DropIns[:min(len(unit.DropIns), 3)] {
			d = append(d, di.Name)
			uc = append(uc, di.Content)
		}
		flags = append(flags, flag)
	}
	return fuzzInput{strings.Join(p, "\n"), modes, strings.Join(c, "\x1e"), strings.Join(u, "\n"), flags,
		strings.Join(uc, "\x1e"), strings.Join(d, "\n"), strings.Join(cfg.UserSSHKeys, "\n"), opts.Hostname}
}

func b2i(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// fuzzConfig is the inverse of fuzzArgs; missing parts are empty.
func fuzzConfig(paths string, modes []byte, contents, units string, flags []byte, unitContents, dropIns, keys string) osm.OSCConfig {
	var cfg osm.OSCConfig
	next := func(parts *[]string) string {
		if len(*parts) == 0 {
			return ""
		}
		s := (*parts)[0]
		*parts = (*parts)[1:]
		return s
	}
	c, uc, d := strings.Split(contents, "\x1e"), strings.Split(unitContents, "\x1e"), strings.Split(dropIns, "\n")
	for i, p := range strings.Split(paths, "\n") {
		if p == "" && i == 0 {
			break
		}
		var m int
		if 2*i+1 < len(modes) {
			m = (int(modes[2*i])<<8 | int(modes[2*i+1])) & 0o7777
		}
		perm, _ := strconv.Atoi(strconv.FormatInt(int64(m), 8))
		cfg.Files = append(cfg.Files, file(p, int32(perm), "", next(&c)))
	}
	for i, name := range strings.Split(units, "\n") {
		if name == "" && i == 0 {
			break
		}
		var flag byte
		if i < len(flags) {
			flag = flags[i]
		}
		u := osm.Unit{Name: name}
		if flag&1 != 0 {
			u.Enable = ptr(flag&2 != 0)
		}
		if flag&4 != 0 {
			u.Mask = ptr(flag&8 != 0)
		}
		if flag&16 != 0 {
			u.Content = ptr(next(&uc))
		}
		for range flag >> 5 & 3 {
			u.DropIns = append(u.DropIns, osm.DropIn{Name: next(&d), Content: next(&uc)})
		}
		cfg.Units = append(cfg.Units, u)
	}
	if keys != "" {
		cfg.UserSSHKeys = strings.Split(keys, "\n")
	}
	return cfg
}

// FuzzAppendString compares appendString with clarketm/json's encoding of s,
// and stringLen with its length.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<MACHINE_NAME> & \"co\" \\", "\x00\x1f\x7f\t\r\n\b\f", "\u2028\u2029\ufffd", "\xff\xfe\xc3", "ünïcode 日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
		if n := stringLen(s); n != len(want) {
			t.Errorf("stringLen(%q) = %d, want %d", s, n, len(want))
		}
	})
}

// FuzzDataURL: a data URL is valid for Ignition (accepted relies on that
// without checking), decodes to its content, needs no JSON escaping and is
// dataURLLen long.
func FuzzDataURL(f *testing.F) {
	for _, s := range []string{"", "x", "<MACHINE_NAME>", "a<MACHINE_NAME> b/c\n\x00\xff-_.!~*'()", "\xff\xfe\"\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u := dataURL(s)
		if n := dataURLLen(s); n != len(u) {
			t.Fatalf("dataURLLen(%q) = %d, want %d", s, n, len(u))
		}
		if r := (types.Resource{Source: &u}).Validate(path.ContextPath{}); len(r.Entries) > 0 {
			t.Fatalf("ignition rejects %s: %s", u, r)
		}
		d, err := dataurl.DecodeString(u)
		if err != nil || string(d.Data) != s {
			t.Fatalf("%s decodes to %q, %v; want %q", u, d.Data, err, s)
		}
		if got := appendString(nil, u); string(got) != `"`+u+`"` {
			t.Fatalf("%s needs escaping: %s", u, got)
		}
	})
}
