package render_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/vincent-petithory/dataurl"

	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// ignitionDoc is what a node gets from an Ignition config of spec 2.x (what
// upstream emits) or 3.x (what we emit): files, units and the core user's keys.
type ignitionDoc struct {
	files map[string]node
	units map[string]string // name -> enabled, mask, contents and drop-ins
	keys  []string
}

func parseIgnition(data []byte) (*ignitionDoc, error) {
	var raw struct {
		Passwd struct {
			Users []struct {
				Name              string   `json:"name"`
				SSHAuthorizedKeys []string `json:"sshAuthorizedKeys"`
			} `json:"users"`
		} `json:"passwd"`
		Storage struct {
			Files []struct {
				Path     string `json:"path"`
				Mode     *int   `json:"mode"`
				Contents struct {
					Source      *string `json:"source"`
					Compression *string `json:"compression"`
				} `json:"contents"`
			} `json:"files"`
		} `json:"storage"`
		Systemd struct {
			Units []struct {
				Name     string  `json:"name"`
				Enable   *bool   `json:"enable"`
				Enabled  *bool   `json:"enabled"`
				Mask     *bool   `json:"mask"`
				Contents *string `json:"contents"`
				Dropins  []struct {
					Name     string  `json:"name"`
					Contents *string `json:"contents"`
				} `json:"dropins"`
			} `json:"units"`
		} `json:"systemd"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	doc := &ignitionDoc{files: map[string]node{}, units: map[string]string{}}
	for _, u := range raw.Passwd.Users {
		if u.Name == "core" {
			doc.keys = append(doc.keys, u.SSHAuthorizedKeys...)
		}
	}
	sort.Strings(doc.keys)
	for _, f := range raw.Storage.Files {
		n := node{mode: 0o644}
		if f.Mode != nil {
			n.mode = int64(*f.Mode)
		}
		if f.Contents.Source != nil {
			u, err := dataurl.DecodeString(*f.Contents.Source)
			if err != nil {
				return nil, fmt.Errorf("file %s: %w", f.Path, err)
			}
			content := u.Data
			if f.Contents.Compression != nil && *f.Contents.Compression == "gzip" {
				r, err := gzip.NewReader(bytes.NewReader(content))
				if err != nil {
					return nil, fmt.Errorf("file %s: %w", f.Path, err)
				}
				if content, err = io.ReadAll(r); err != nil {
					return nil, fmt.Errorf("file %s: %w", f.Path, err)
				}
			}
			n.content = string(content)
		}
		doc.files[f.Path] = n
	}
	for _, u := range raw.Systemd.Units {
		enabled := (u.Enable != nil && *u.Enable) || (u.Enabled != nil && *u.Enabled)
		desc := fmt.Sprintf("enabled=%t mask=%t contents=%q", enabled, u.Mask != nil && *u.Mask, deref(u.Contents))
		for _, d := range u.Dropins {
			desc += fmt.Sprintf(" dropin %s=%q", d.Name, deref(d.Contents))
		}
		doc.units[u.Name] = desc
	}
	return doc, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func diffIgnition(want, got []byte) ([]string, error) {
	w, err := parseIgnition(want)
	if err != nil {
		return nil, fmt.Errorf("expected user-data: %w", err)
	}
	g, err := parseIgnition(got)
	if err != nil {
		return []string{fmt.Sprintf("not an Ignition config: %v", err)}, nil
	}
	diffs := diffFiles(w.files, g.files)
	for _, name := range unionKeys(w.units, g.units) {
		if w.units[name] != g.units[name] {
			diffs = append(diffs, fmt.Sprintf("unit %s: got %s, want %s", name, g.units[name], w.units[name]))
		}
	}
	if !reflect.DeepEqual(w.keys, g.keys) {
		diffs = append(diffs, fmt.Sprintf("core's SSH keys: got %v, want %v", g.keys, w.keys))
	}
	return diffs, nil
}

// TestIgnitionComparison checks the Ignition comparison used for cases with
// Flatcar: a payload equals itself and a changed file or unit is reported.
func TestIgnitionComparison(t *testing.T) {
	in := benchInput(t, true)
	res, err := render.NewRenderer().Render(in)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Provisioning
	if diffs := diffUserData(t, got.UserData, got); len(diffs) != 0 {
		t.Errorf("a payload differs from itself: %v", diffs)
	}
	changed := bytes.Replace(got.UserData, []byte(`"enabled":true`), []byte(`"enabled":false`), 1)
	if bytes.Equal(changed, got.UserData) {
		t.Fatal("no enabled unit to change")
	}
	if diffs := diffUserData(t, changed, got); len(diffs) != 1 || !strings.HasPrefix(diffs[0], "unit ") {
		t.Errorf("a disabled unit gave diffs %v", diffs)
	}
}
