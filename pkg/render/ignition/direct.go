package ignition

import "strconv"

// encodeDirect writes c as Ignition JSON, byte for byte what butane's
// translation of c marshalled by clarketm/json is: the fields in the order of
// Ignition's types, empty ones left out, strings escaped as appendString does.
// Only valid for a config that accepted(c) accepts.
func encodeDirect(c *config) []byte {
	b := make([]byte, 0, directLen(c))
	b = append(b, `{"ignition":{"version":"`+SpecVersion+`"}`...)
	if len(c.keys) > 0 {
		b = append(b, `,"passwd":{"users":[{"name":"`+coreUser+`","sshAuthorizedKeys":[`...)
		for i, k := range c.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
		}
		b = append(b, "]}]}"...)
	}
	if len(c.files) > 0 {
		b = append(b, `,"storage":{"files":[`...)
		for i := range c.files {
			f := &c.files[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"overwrite":true,"path":`...)
			b = appendString(b, f.path)
			b = append(b, `,"contents":{"source":"`...)
			b = appendDataURL(b, f.data)
			b = append(b, `"},"mode":`...)
			b = strconv.AppendInt(b, int64(f.mode), 10)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	if len(c.units) > 0 {
		b = append(b, `,"systemd":{"units":[`...)
		for i := range c.units {
			u := &c.units[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			if u.Content != nil {
				b = append(b, `"contents":`...)
				b = append(appendString(b, *u.Content), ',')
			}
			if len(u.DropIns) > 0 {
				b = append(b, `"dropins":[`...)
				for j := range u.DropIns {
					if j > 0 {
						b = append(b, ',')
					}
					b = append(b, `{"contents":`...)
					b = appendString(b, u.DropIns[j].Content)
					b = append(b, `,"name":`...)
					b = append(appendString(b, u.DropIns[j].Name), '}')
				}
				b = append(b, "],"...)
			}
			if u.Enable != nil {
				b = append(b, `"enabled":`...)
				b = append(strconv.AppendBool(b, *u.Enable), ',')
			}
			if u.Mask != nil {
				b = append(b, `"mask":`...)
				b = append(strconv.AppendBool(b, *u.Mask), ',')
			}
			b = append(b, `"name":`...)
			b = append(appendString(b, u.Name), '}')
		}
		b = append(b, "]}"...)
	}
	return append(b, '}')
}

// directLen is the length of encodeDirect(c), so that its buffer is
// allocated once (the equivalence tests check it on every config).
func directLen(c *config) int {
	n := len(`{"ignition":{"version":"` + SpecVersion + `"}}`)
	if len(c.keys) > 0 {
		n += len(`,"passwd":{"users":[{"name":"`+coreUser+`","sshAuthorizedKeys":[]}]}`) + len(c.keys) - 1
		for _, k := range c.keys {
			n += stringLen(k)
		}
	}
	if len(c.files) > 0 {
		n += len(`,"storage":{"files":[]}`) + len(c.files) - 1
		for i := range c.files {
			f := &c.files[i]
			n += len(`{"overwrite":true,"path":,"contents":{"source":""},"mode":}`) + stringLen(f.path) +
				dataURLLen(f.data) + digits(f.mode)
		}
	}
	if len(c.units) > 0 {
		n += len(`,"systemd":{"units":[]}`) + len(c.units) - 1
		for i := range c.units {
			u := &c.units[i]
			n += len(`{"name":}`) + stringLen(u.Name)
			if u.Content != nil {
				n += len(`"contents":,`) + stringLen(*u.Content)
			}
			if len(u.DropIns) > 0 {
				n += len(`"dropins":[],`) + len(u.DropIns) - 1
				for j := range u.DropIns {
					n += len(`{"contents":,"name":}`) + stringLen(u.DropIns[j].Content) + stringLen(u.DropIns[j].Name)
				}
			}
			if u.Enable != nil {
				n += len(`"enabled":,`) + len(strconv.FormatBool(*u.Enable))
			}
			if u.Mask != nil {
				n += len(`"mask":,`) + len(strconv.FormatBool(*u.Mask))
			}
		}
	}
	return n
}

// digits is the number of decimal digits of n ≥ 0.
func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}
