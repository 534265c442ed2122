package cloudinit

import (
	"fmt"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// appendUnits appends systemd units the way upstream does: under coreos.units,
// which Flatcar's coreos-cloudinit writes to /etc/systemd/system (drop-ins to
// <unit>.d/), enables, masks and starts. The only OSPs with units are Flatcar's;
// cloud-init elsewhere ignores the key, so other OSPs ship units as files.
func appendUnits(b []byte, units []osm.Unit) ([]byte, error) {
	if len(units) == 0 {
		return b, nil
	}
	b = append(b, "coreos:\n  units:\n"...)
	var err error
	for i := range units {
		u := &units[i]
		b = append(b, "  - name: "...)
		if b, err = appendQuoted(b, u.Name); err != nil {
			return nil, fmt.Errorf("unit %q: name: %w", u.Name, err)
		}
		b = append(b, '\n')
		// Unset means false to coreos-cloudinit; upstream writes it out, so do we.
		enable, mask := u.Enable != nil && *u.Enable, u.Mask != nil && *u.Mask
		b = appendBool(b, "    enable: ", enable)
		if enable {
			b = append(b, "    command: start\n"...)
		}
		b = appendBool(b, "    mask: ", mask)
		if u.Content != nil {
			if b, err = appendText(b, "    content: ", *u.Content, 6); err != nil {
				return nil, fmt.Errorf("unit %s: content: %w", u.Name, err)
			}
		}
		if len(u.DropIns) > 0 {
			b = append(b, "    drop-ins:\n"...)
		}
		for _, d := range u.DropIns {
			b = append(b, "    - name: "...)
			if b, err = appendQuoted(b, d.Name); err != nil {
				return nil, fmt.Errorf("unit %s: drop-in %q: name: %w", u.Name, d.Name, err)
			}
			b = append(b, '\n')
			if b, err = appendText(b, "      content: ", d.Content, 8); err != nil {
				return nil, fmt.Errorf("unit %s: drop-in %s: content: %w", u.Name, d.Name, err)
			}
		}
	}
	return b, nil
}

// appendText appends key and s as a literal block indented by indent, or as a
// quoted scalar when a literal block could not carry s exactly.
func appendText(b []byte, key, s string, indent int) ([]byte, error) {
	b = append(b, key...)
	if literalSafe(s) {
		return appendLiteral(b, s, indent), nil
	}
	b, err := appendQuoted(b, s)
	return append(b, '\n'), err
}

func appendBool(b []byte, key string, v bool) []byte {
	b = append(b, key...)
	if v {
		return append(b, "true\n"...)
	}
	return append(b, "false\n"...)
}
