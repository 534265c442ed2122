package ignition

import (
	"strings"

	"github.com/coreos/ignition/v2/config/v3_3/types"
	"github.com/coreos/vcontext/path"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// accepted tells whether butane translates c without a report entry (an
// error or a warning), so that encodeDirect's output is butane's. A false
// answer only costs speed: the config goes through butane, which then
// translates or reports it.
//
// Butane validates the butane config (for what we set: one source per
// resource, and a warning for modes that look decimal), translates it, and
// validates the Ignition config: each file, unit and drop-in on its own
// (Validate of the Ignition types, called as they are, through the verdicts
// of verdicts.go), across items (Config, Systemd) and for duplicate keys in
// every list (ValidateDups), which are spelled out below for the lists we
// fill. Data URLs always decode (dataurl.go), so their validation is not
// repeated.
func accepted(c *config) bool {
	paths := make(map[string]struct{}, len(c.files))
	for i := range c.files {
		f := &c.files[i]
		if !fileValid(f.path, f.mode) {
			return false
		}
		if has(paths, f.path) {
			return false
		}
		paths[f.path] = struct{}{}
	}
	const systemdPath = "/etc/systemd/system/"
	instances := false
	for i := range c.units {
		u := &c.units[i]
		if !unitValid(u) {
			return false
		}
		for j := range i {
			if c.units[j].Name == u.Name {
				return false
			}
		}
		// Config.Validate: a file must not be where a unit or drop-in goes.
		if u.Content != nil && *u.Content != "" && has(paths, systemdPath+u.Name) {
			return false
		}
		for j := range u.DropIns {
			d := &u.DropIns[j]
			if !dropInValid(d) {
				return false
			}
			for k := range j {
				if u.DropIns[k].Name == d.Name {
					return false
				}
			}
			if d.Content != "" && has(paths, systemdPath+u.Name+".d/"+d.Name) {
				return false
			}
		}
		// Systemd.Validate looks at enabled units named like an instance.
		instances = instances || (u.Enable != nil && *u.Enable && strings.Contains(u.Name, "@"))
	}
	if instances && !systemdValid(c.units) {
		return false
	}
	for i, k := range c.keys {
		for _, l := range c.keys[:i] {
			if k == l {
				return false
			}
		}
	}
	return true
}

func has(set map[string]struct{}, key string) bool {
	_, ok := set[key]
	return ok
}

// systemdValid runs Ignition's Systemd validation of units.
func systemdValid(units []osm.Unit) bool {
	s := types.Systemd{Units: make([]types.Unit, len(units))}
	for i := range units {
		u := &units[i]
		s.Units[i] = types.Unit{Name: u.Name, Contents: u.Content, Enabled: u.Enable, Mask: u.Mask}
		for j := range u.DropIns {
			s.Units[i].Dropins = append(s.Units[i].Dropins, types.Dropin{Name: u.DropIns[j].Name, Contents: &u.DropIns[j].Content})
		}
	}
	return len(s.Validate(path.ContextPath{}).Entries) == 0
}
