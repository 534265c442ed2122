package ignition

import (
	"fmt"

	base "github.com/coreos/butane/base/v0_4"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// butaneFile translates an OSC file. Encoding b64 in an OSP only says how cloud-init
// payloads carry the content; Ignition gets the content itself.
func butaneFile(f *osm.File) (base.File, error) {
	mode, err := octal(f.Permissions)
	if err != nil {
		return base.File{}, fmt.Errorf("file %s: %w", f.Path, err)
	}
	var data string
	if in := f.Content.Inline; in != nil {
		if in.Encoding != "" && in.Encoding != "b64" {
			return base.File{}, fmt.Errorf("file %s: unknown encoding %q, want b64 or none", f.Path, in.Encoding)
		}
		data = in.Data
	}
	overwrite := true // as upstream's Ignition 2 output, and files Flatcar ships may exist
	out := base.File{Path: f.Path, Mode: &mode, Overwrite: &overwrite}
	src := dataURL(data)
	out.Contents.Source = &src
	return out, nil
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
