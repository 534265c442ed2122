// Package ignition writes an OperatingSystemConfig's files, units and SSH keys
// as an Ignition spec 3.x config for Flatcar, with the output of butane's
// flatcar variant.
//
// Butane is the reference: EncodeWithButane translates through it. Encode
// writes the same bytes directly (direct.go) when it can tell that butane would
// translate the config without an error or a warning (accept.go), and goes
// through butane otherwise, so an invalid config fails with butane's report.
// The equivalence tests compare both paths on the default OSPs and on fuzzed
// configs.
package ignition

import (
	"fmt"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

const (
	// ButaneVersion is the flatcar variant's version we write; it translates to
	// Ignition spec SpecVersion, which every Flatcar release since 3185 reads.
	ButaneVersion = "1.0.0"
	// SpecVersion is the Ignition spec version of our output.
	SpecVersion = "3.3.0"

	machineNameFile = "/etc/machine-name"
	coreUser        = "core"
)

// Options are the parts of a payload that depend on more than the config itself.
type Options struct {
	// Hostname, when set, is written to /etc/machine-name, where Flatcar's OSPs
	// read the node's name from (see cloudinit.Hostname for upstream's rule).
	Hostname string
}

// Encode writes cfg as an Ignition spec 3.x JSON config, with the settings of
// opts that do not come from cfg. Butane's warnings fail the encoding like its
// errors do: a payload that Ignition might apply differently than the OSP says
// is not one to ship.
func Encode(cfg osm.OSCConfig, opts Options) ([]byte, error) {
	c, err := newConfig(&cfg, opts)
	if err != nil {
		return nil, err
	}
	if accepted(&c) {
		return encodeDirect(&c), nil
	}
	return encodeButane(&c)
}

// EncodeWithButane is Encode through butane's translation alone:
// the reference the direct encoder is tested against.
func EncodeWithButane(cfg osm.OSCConfig, opts Options) ([]byte, error) {
	c, err := newConfig(&cfg, opts)
	if err != nil {
		return nil, err
	}
	return encodeButane(&c)
}

// config is what a payload is made of, with each file's mode resolved.
type config struct {
	keys  []string
	files []resolvedFile // the OSC's files, then /etc/machine-name if there is a hostname
	units []osm.Unit
}

// resolvedFile is a file of the payload; Ignition gets its content as a data URL.
type resolvedFile struct {
	path string
	mode int
	data string
}

// newConfig resolves cfg's file modes and contents; its errors are those
// that butane never sees.
func newConfig(cfg *osm.OSCConfig, opts Options) (config, error) {
	c := config{keys: cfg.UserSSHKeys, units: cfg.Units, files: make([]resolvedFile, 0, len(cfg.Files)+1)}
	for i := range cfg.Files {
		f, err := newFile(&cfg.Files[i])
		if err != nil {
			return c, err
		}
		c.files = append(c.files, f)
	}
	if opts.Hostname != "" {
		f, err := newFile(&osm.File{Path: machineNameFile, Permissions: 600, Content: osm.FileContent{
			Inline: &osm.FileContentInline{Data: opts.Hostname},
		}})
		if err != nil {
			return c, err
		}
		c.files = append(c.files, f)
	}
	return c, nil
}

// newFile resolves an OSC file. Encoding b64 in an OSP only says how cloud-init
// payloads carry the content; Ignition gets the content itself.
func newFile(f *osm.File) (resolvedFile, error) {
	mode, err := octal(f.Permissions)
	if err != nil {
		return resolvedFile{}, fmt.Errorf("file %s: %w", f.Path, err)
	}
	var data string
	if in := f.Content.Inline; in != nil {
		if in.Encoding != "" && in.Encoding != "b64" {
			return resolvedFile{}, fmt.Errorf("file %s: unknown encoding %q, want b64 or none", f.Path, in.Encoding)
		}
		data = in.Data
	}
	return resolvedFile{path: f.Path, mode: mode, data: data}, nil
}

// octal reads p, octal digits written as a decimal number (644), as the mode
// Ignition wants (0644). Zero means unset: the CRD defaults it to 644.
func octal(p int32) (int, error) {
	if p == 0 {
		p = 644
	}
	if p < 0 || p > 7777 {
		return 0, fmt.Errorf("permissions %d are not 3 or 4 octal digits", p)
	}
	mode, shift := 0, 0
	for v := p; v > 0; v, shift = v/10, shift+3 {
		if v%10 > 7 {
			return 0, fmt.Errorf("permissions %d are not octal digits", p)
		}
		mode |= int(v%10) << shift
	}
	return mode, nil
}
