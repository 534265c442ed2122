package ignition

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/clarketm/json"
	base "github.com/coreos/butane/base/v0_4"
	"github.com/coreos/butane/config/common"
	flatcar "github.com/coreos/butane/config/flatcar/v1_0"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// encodeButane translates c through butane's flatcar variant.
func encodeButane(c *config) ([]byte, error) {
	bc := butaneConfig(c)
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

// butaneConfig builds the butane config of c.
func butaneConfig(c *config) flatcar.Config {
	var bc flatcar.Config
	bc.Version, bc.Variant = ButaneVersion, "flatcar"
	if len(c.keys) > 0 {
		bc.Passwd.Users = append(bc.Passwd.Users, userCore(c.keys))
	}
	for _, f := range c.files {
		// As upstream's Ignition 2 output, and files Flatcar ships may exist.
		overwrite, mode, src := true, f.mode, dataURL(f.data)
		out := base.File{Path: f.path, Mode: &mode, Overwrite: &overwrite}
		out.Contents.Source = &src
		bc.Storage.Files = append(bc.Storage.Files, out)
	}
	for i := range c.units {
		bc.Systemd.Units = append(bc.Systemd.Units, unit(&c.units[i]))
	}
	return bc
}

func unit(u *osm.Unit) base.Unit {
	out := base.Unit{Name: u.Name, Enabled: u.Enable, Mask: u.Mask, Contents: u.Content}
	for i := range u.DropIns {
		out.Dropins = append(out.Dropins, base.Dropin{Name: u.DropIns[i].Name, Contents: &u.DropIns[i].Content})
	}
	return out
}

func userCore(keys []string) base.PasswdUser {
	u := base.PasswdUser{Name: coreUser}
	for _, k := range keys {
		u.SSHAuthorizedKeys = append(u.SSHAuthorizedKeys, base.SSHAuthorizedKey(k))
	}
	return u
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
