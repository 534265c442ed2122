package render_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// node is what a node sees from one file of a payload.
type node struct {
	mode    int64
	content string
}

// diffUserData compares cloud-init user-data semantically: files by path with
// decoded content and octal mode, and every other top-level key by value, with
// null values meaning the same as absent ones (contract.md).
func diffUserData(t *testing.T, want []byte, got render.Payload) []string {
	t.Helper()
	if bytes.HasPrefix(bytes.TrimSpace(want), []byte("{")) {
		if got.Format != osm.PayloadFormatIgnition {
			return []string{fmt.Sprintf("format %s, want ignition", got.Format)}
		}
		diffs, err := diffIgnition(want, got.UserData)
		if err != nil {
			t.Fatal(err)
		}
		return diffs
	}
	if got.Format != osm.PayloadFormatCloudInit {
		return []string{fmt.Sprintf("format %s, want cloud-init", got.Format)}
	}
	wantDoc, err := parseCloudConfig(want)
	if err != nil {
		t.Fatalf("expected user-data: %v", err)
	}
	gotDoc, err := parseCloudConfig(got.UserData)
	if err != nil {
		return []string{fmt.Sprintf("not YAML: %v", err)}
	}
	var diffs []string
	wantFiles, err := cloudInitFiles(wantDoc)
	if err != nil {
		t.Fatalf("expected user-data: %v", err)
	}
	gotFiles, err := cloudInitFiles(gotDoc)
	if err != nil {
		return []string{err.Error()}
	}
	diffs = append(diffs, diffFiles(wantFiles, gotFiles)...)
	delete(wantDoc, "write_files")
	delete(gotDoc, "write_files")
	for _, k := range unionKeys(wantDoc, gotDoc) {
		w, g := dropNulls(wantDoc[k]), dropNulls(gotDoc[k])
		if !reflect.DeepEqual(w, g) {
			diffs = append(diffs, fmt.Sprintf("%s: got %v, want %v", k, g, w))
		}
	}
	return diffs
}

func parseCloudConfig(data []byte) (map[string]any, error) {
	if !strings.HasPrefix(string(data), "#cloud-config\n") {
		return nil, fmt.Errorf("no #cloud-config header")
	}
	doc := map[string]any{}
	return doc, yaml.Unmarshal(data, &doc)
}

func cloudInitFiles(doc map[string]any) (map[string]node, error) {
	files := map[string]node{}
	list, _ := doc["write_files"].([]any)
	for _, item := range list {
		f, _ := item.(map[string]any)
		path, _ := f["path"].(string)
		content := fmt.Sprint(f["content"])
		if f["content"] == nil {
			content = ""
		}
		if enc, _ := f["encoding"].(string); enc == "b64" || enc == "base64" {
			data, err := base64.StdEncoding.DecodeString(content)
			if err != nil {
				return nil, fmt.Errorf("file %s: %w", path, err)
			}
			content = string(data)
		}
		mode, err := strconv.ParseInt(fmt.Sprint(f["permissions"]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("file %s: permissions %v", path, f["permissions"])
		}
		if _, dup := files[path]; dup {
			return nil, fmt.Errorf("file %s written twice", path)
		}
		files[path] = node{mode: mode, content: content}
	}
	return files, nil
}

// upstreamNames, when set, renames in upstream's files the objects we name
// differently on purpose (see TestUpstreamCases).
var upstreamNames *strings.Replacer

func diffFiles(want, got map[string]node) []string {
	var diffs []string
	for _, path := range unionKeys(want, got) {
		w, wok := want[path]
		g, gok := got[path]
		if upstreamNames != nil {
			w.content = upstreamNames.Replace(w.content)
		}
		switch {
		case !gok:
			diffs = append(diffs, "missing file "+path)
		case !wok:
			diffs = append(diffs, "unexpected file "+path)
		case w.mode != g.mode:
			diffs = append(diffs, fmt.Sprintf("file %s: mode %o, want %o", path, g.mode, w.mode))
		case strings.TrimRight(w.content, "\n") != strings.TrimRight(g.content, "\n"):
			diffs = append(diffs, fmt.Sprintf("file %s: content differs:\n%s", path, lineDiff(w.content, g.content)))
		}
	}
	return diffs
}

// diffOSC compares the spec of upstream's OperatingSystemConfig with ours.
func diffOSC(t *testing.T, want []byte, got osm.OperatingSystemConfigSpec) []string {
	t.Helper()
	var doc struct {
		Spec osmv1alpha1.OperatingSystemConfigSpec `json:"spec"`
	}
	if err := yaml.Unmarshal(want, &doc); err != nil {
		t.Fatalf("expected osc: %v", err)
	}
	var gotV1 osmv1alpha1.OperatingSystemConfigSpec
	if err := osmv1alpha1.Convert_osm_OperatingSystemConfigSpec_To_v1alpha1_OperatingSystemConfigSpec(&got, &gotV1, nil); err != nil {
		t.Fatal(err)
	}
	w, g := doc.Spec, gotV1
	var diffs []string
	for _, f := range []struct {
		name      string
		want, got any
	}{
		{"osName", w.OSName, g.OSName},
		{"osVersion", w.OSVersion, g.OSVersion},
		{"provisioningUtility", w.ProvisioningUtility, g.ProvisioningUtility},
		{"cloudProvider.name", w.CloudProvider.Name, g.CloudProvider.Name},
		{"cloudProvider.spec", jsonValue(w.CloudProvider.Spec.Raw), jsonValue(g.CloudProvider.Spec.Raw)},
	} {
		if !reflect.DeepEqual(f.want, f.got) {
			diffs = append(diffs, fmt.Sprintf("%s: got %v, want %v", f.name, f.got, f.want))
		}
	}
	for _, c := range []struct {
		name      string
		want, got osmv1alpha1.OSCConfig
	}{{"bootstrapConfig", w.BootstrapConfig, g.BootstrapConfig}, {"provisioningConfig", w.ProvisioningConfig, g.ProvisioningConfig}} {
		for _, d := range diffFiles(oscFiles(c.want.Files), oscFiles(c.got.Files)) {
			diffs = append(diffs, c.name+": "+d)
		}
		if paths(c.want.Files) != paths(c.got.Files) {
			diffs = append(diffs, fmt.Sprintf("%s: file order %s, want %s", c.name, paths(c.got.Files), paths(c.want.Files)))
		}
		for _, x := range []struct {
			name      string
			want, got any
		}{
			{"units", c.want.Units, c.got.Units},
			{"modules", c.want.CloudInitModules, c.got.CloudInitModules},
			{"userSSHKeys", c.want.UserSSHKeys, c.got.UserSSHKeys},
		} {
			if !reflect.DeepEqual(x.want, x.got) {
				diffs = append(diffs, fmt.Sprintf("%s.%s: got %+v, want %+v", c.name, x.name, x.got, x.want))
			}
		}
	}
	return diffs
}

func oscFiles(files []osmv1alpha1.File) map[string]node {
	m := map[string]node{}
	for _, f := range files {
		mode, _ := strconv.ParseInt(strconv.Itoa(int(f.Permissions)), 8, 32)
		n := node{mode: mode}
		if f.Content.Inline != nil {
			n.content = f.Content.Inline.Data + " encoding=" + f.Content.Inline.Encoding
		}
		m[f.Path] = n
	}
	return m
}

func paths(files []osmv1alpha1.File) string {
	var p []string
	for _, f := range files {
		p = append(p, f.Path)
	}
	return strings.Join(p, ",")
}

func jsonValue(raw []byte) any {
	var v any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &v)
	}
	return v
}

// dropNulls removes map entries whose value is null, recursively.
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e != nil {
				out[k] = dropNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = dropNulls(e)
		}
		return out
	}
	return v
}

func unionKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// lineDiff shows the first differing line of two texts.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("  line %d: got  %q\n  line %d: want %q", i+1, gl, i+1, wl)
		}
	}
	return "  (only trailing newlines differ)"
}
