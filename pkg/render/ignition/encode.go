// Package ignition writes an OperatingSystemConfig's files, units and SSH keys
// as an Ignition spec 3.x config for Flatcar, through butane's flatcar variant.
package ignition

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/clarketm/json"
	"github.com/coreos/butane/config/common"
	flatcar "github.com/coreos/butane/config/flatcar/v1_0"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

const (
	// ButaneVersion is the flatcar variant's version we write; it translates to
	// Ignition spec SpecVersion, which every Flatcar release since 3185 reads.
	ButaneVersion = "1.0.0"
	// SpecVersion is the Ignition spec version of our output.
	SpecVersion = "3.3.0"

	// machineNamePlaceholder is replaced by machine-controller in the user-data,
	// also in its URL-encoded form %3CMACHINE_NAME%3E inside data URLs.
	machineNamePlaceholder = "<MACHINE_NAME>"
	machineNameFile        = "/etc/machine-name"
	coreUser               = "core"
)

// Options are the parts of a payload that depend on more than the config itself.
type Options struct {
	// Hostname, when set, is written to /etc/machine-name, where Flatcar's OSPs
	// read the node's name from (see cloudinit.Hostname for upstream's rule).
	Hostname string
}

// Encode writes cfg as an Ignition spec 3.x JSON config, through butane's flatcar variant.
func Encode(cfg osm.OSCConfig) ([]byte, error) {
	return EncodeWithOptions(cfg, Options{})
}

// EncodeWithOptions is Encode with the settings that do not come from cfg.
// Butane's warnings fail the encoding like its errors do: a payload that
// Ignition might apply differently than the OSP says is not one to ship.
func EncodeWithOptions(cfg osm.OSCConfig, opts Options) ([]byte, error) {
	bc, err := butaneConfig(cfg, opts)
	if err != nil {
		return nil, err
	}
	// Compression would hide <MACHINE_NAME> from machine-controller; files come
	// as data URLs anyway (see dataURL), so butane has nothing to compress.
	ign, r, err := bc.ToIgn3_3(common.TranslateOptions{NoResourceAutoCompression: true})
	if err != nil || len(r.Entries) > 0 {
		return nil, fmt.Errorf("butane translation failed: %s", reportString(r, err))
	}
	// clarketm/json, like butane itself, leaves out empty structs.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// HTML escaping would turn <MACHINE_NAME> in unit contents into \u003c...
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ign); err != nil {
		return nil, fmt.Errorf("failed to marshal ignition config: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// butaneConfig builds the butane config of cfg.
func butaneConfig(cfg osm.OSCConfig, opts Options) (flatcar.Config, error) {
	var c flatcar.Config
	c.Version, c.Variant = ButaneVersion, "flatcar"
	if len(cfg.UserSSHKeys) > 0 {
		u := userCore(cfg.UserSSHKeys)
		c.Passwd.Users = append(c.Passwd.Users, u)
	}
	for i := range cfg.Files {
		f, err := butaneFile(&cfg.Files[i])
		if err != nil {
			return c, err
		}
		c.Storage.Files = append(c.Storage.Files, f)
	}
	if opts.Hostname != "" {
		f, err := butaneFile(&osm.File{Path: machineNameFile, Permissions: 600, Content: osm.FileContent{
			Inline: &osm.FileContentInline{Data: opts.Hostname},
		}})
		if err != nil {
			return c, err
		}
		c.Storage.Files = append(c.Storage.Files, f)
	}
	for i := range cfg.Units {
		c.Systemd.Units = append(c.Systemd.Units, unit(&cfg.Units[i]))
	}
	return c, nil
}

// reportString describes a failed translation: butane's entries, with paths
// into the config, or its error alone.
func reportString(r fmt.Stringer, err error) string {
	s := strings.TrimSpace(r.String())
	switch {
	case s == "" && err != nil:
		return err.Error()
	case err == nil || errors.Is(err, common.ErrInvalidSourceConfig) || errors.Is(err, common.ErrInvalidGeneratedConfig):
		return strings.ReplaceAll(s, "\n", "; ")
	}
	return err.Error() + ": " + strings.ReplaceAll(s, "\n", "; ")
}
