package ignition

import (
	baseutil "github.com/coreos/butane/base/util"
	"github.com/coreos/ignition/v2/config/v3_3/types"
	"github.com/coreos/vcontext/path"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/lru"
)

// Parsing a unit's contents (go-systemd's lexer runs in a goroutine of its
// own per unit) was half of what a warm Flatcar render cost, and validating
// files most of its allocations. Renders of a known OSP bring the same units
// and files again, so the units, drop-ins and files (path and mode) that
// Ignition's validation found valid are remembered, keyed by everything their
// Validate reads; invalid ones are not, they go to butane anyway. At most
// maxVerdicts entries are kept, least recently used evicted first; an item
// whose name and contents exceed maxVerdictBytes is validated every time, so
// the cache holds at most maxVerdicts*maxVerdictBytes (4 MiB) of keys.
const (
	maxVerdicts     = 1024
	maxVerdictBytes = 4 << 10
)

// itemKey is what types.Unit.Validate reads (for a drop-in, Dropin.Validate;
// for a file, File.Validate and butane's mode check) reads.
type itemKey struct {
	dropIn, file    bool
	name, contents  string
	hasContents     bool
	enabled, masked int8 // -1 unset, 0 false, 1 true
	mode            int
}

// verdicts are the units, drop-ins and files found valid.
var verdicts = lru.New[itemKey, struct{}](maxVerdicts)

func tri(b *bool) int8 {
	switch {
	case b == nil:
		return -1
	case *b:
		return 1
	}
	return 0
}

// unitValid runs Ignition's validation of u, or remembers it passed.
func unitValid(u *osm.Unit) bool {
	k := itemKey{name: u.Name, enabled: tri(u.Enable), masked: tri(u.Mask), hasContents: u.Content != nil}
	if u.Content != nil {
		k.contents = *u.Content
	}
	return remembered(k, func() bool {
		tu := types.Unit{Name: u.Name, Contents: u.Content, Enabled: u.Enable, Mask: u.Mask}
		return len(tu.Validate(path.ContextPath{}).Entries) == 0
	})
}

// dropInValid runs Ignition's validation of d, or remembers it passed.
func dropInValid(d *osm.DropIn) bool {
	return remembered(itemKey{dropIn: true, name: d.Name, contents: d.Content, hasContents: true}, func() bool {
		return len((types.Dropin{Name: d.Name, Contents: &d.Content}).Validate(path.ContextPath{}).Entries) == 0
	})
}

func remembered(k itemKey, validate func() bool) bool {
	if _, ok := verdicts.Get(k); ok {
		return true
	}
	if !validate() {
		return false
	}
	if len(k.name)+len(k.contents) <= maxVerdictBytes {
		verdicts.Add(k, struct{}{})
	}
	return true
}

// fileValid runs Ignition's validation of a file at name with mode, and
// butane's check for modes that look decimal, or remembers they passed.
func fileValid(name string, mode int) bool {
	return remembered(itemKey{file: true, name: name, mode: mode}, func() bool {
		overwrite, source := true, "data:,"
		tf := types.File{
			Node:          types.Node{Path: name, Overwrite: &overwrite},
			FileEmbedded1: types.FileEmbedded1{Mode: &mode, Contents: types.Resource{Source: &source}},
		}
		return len(tf.Validate(path.ContextPath{}).Entries) == 0 && baseutil.CheckForDecimalMode(mode, false) == nil
	})
}
