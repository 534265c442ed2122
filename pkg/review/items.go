package review

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// item is one file, unit, drop-in or module of a config: a header (a
// file's permissions and encoding, a unit's enable and mask) and its text,
// compared as they are and diffed joined.
type item struct {
	name, header, text string
}

func (it *item) full() string {
	if it.header == "" {
		return it.text
	}
	return it.header + "\n" + it.text
}

// files are a config's files: a header with permissions and encoding, then
// the content (as rendered, before the payload's encoding).
func files(c *osm.OSCConfig) []item {
	out := make([]item, 0, len(c.Files))
	for _, f := range c.Files {
		text, encoding := "", ""
		if in := f.Content.Inline; in != nil {
			text, encoding = in.Data, in.Encoding
		}
		header := fmt.Sprintf("# permissions: %04d", f.Permissions)
		if encoding != "" {
			header += ", encoding: " + encoding
		}
		out = append(out, item{name: f.Path, header: header, text: text})
	}
	return out
}

// units are a config's units (enable and mask, then the content) and their
// drop-ins, as unit/drop-in.
func units(c *osm.OSCConfig) []item {
	var out []item
	for _, u := range c.Units {
		text := ""
		if u.Content != nil {
			text = *u.Content
		}
		out = append(out, item{name: u.Name, header: fmt.Sprintf("# enable: %t, mask: %t", u.Enable != nil && *u.Enable, u.Mask != nil && *u.Mask), text: text})
		for _, d := range u.DropIns {
			out = append(out, item{name: u.Name + "/" + d.Name, text: d.Content})
		}
	}
	return out
}

// modules are a config's cloud-init modules: commands one per line, maps as
// sorted key: value lines, a yum repository per item.
func modules(c *osm.OSCConfig) []item {
	m := c.CloudInitModules
	if m == nil {
		return nil
	}
	var out []item
	lines := func(name string, cmds []string) {
		if len(cmds) > 0 {
			out = append(out, item{name: name, text: strings.Join(cmds, "\n") + "\n"})
		}
	}
	keyValues := func(name string, kv map[string]string) {
		if len(kv) == 0 {
			return
		}
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(kv)) {
			fmt.Fprintf(&b, "%s: %s\n", k, kv[k])
		}
		out = append(out, item{name: name, text: b.String()})
	}
	lines("bootcmd", m.BootCMD)
	lines("runcmd", m.RunCMD)
	keyValues("rh_subscription", m.RHSubscription)
	for _, name := range slices.Sorted(maps.Keys(m.YumRepos)) {
		keyValues("yum_repos/"+name, m.YumRepos[name])
	}
	if m.YumRepoDir != "" {
		out = append(out, item{name: "yum_repo_dir", text: m.YumRepoDir + "\n"})
	}
	return out
}

// items compares two lists of one kind, in the order of after's items, then
// before's removed ones.
func (d *Differ) items(config string, before, after []item) []osm.ItemReview {
	old := make(map[string]*item, len(before))
	for i := range before {
		old[before[i].name] = &before[i]
	}
	seen := make(map[string]bool, len(after))
	var out []osm.ItemReview
	for i := range after {
		it := &after[i]
		seen[it.name] = true
		prev, ok := old[it.name]
		switch {
		case !ok:
			out = append(out, osm.ItemReview{Config: config, Name: it.name, Change: osm.ItemAdded, Diff: d.Diff(config+" "+it.name, "", it.full())})
		case prev.header != it.header || prev.text != it.text:
			out = append(out, osm.ItemReview{Config: config, Name: it.name, Change: osm.ItemChanged, Diff: d.Diff(config+" "+it.name, prev.full(), it.full())})
		}
	}
	for i := range before {
		if it := &before[i]; !seen[it.name] {
			out = append(out, osm.ItemReview{Config: config, Name: it.name, Change: osm.ItemRemoved, Diff: d.Diff(config+" "+it.name, it.full(), "")})
		}
	}
	return out
}
