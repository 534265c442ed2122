package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"text/template"

	"github.com/Masterminds/semver/v3"

	"github.com/BurntSushi/toml"
	"github.com/Masterminds/sprig/v3"
	"gopkg.in/yaml.v3"

	"github.com/osm-apiserver/osm-apiserver/pkg/lru"
)

// namedTemplateFunc is the function that {{ template "name" }} actions of OSP
// files are rewritten to call (see rewrite.go). The leading underscore keeps it
// out of the way of sprig and of anything an OSP could call by accident.
const namedTemplateFunc = "_osmTemplate"

// funcMap is built once: sprig.TxtFuncMap allocates a fresh map of ~200
// functions on every call.
var funcMap = buildFuncMap()

func buildFuncMap() template.FuncMap {
	m := sprig.TxtFuncMap()
	extra := template.FuncMap{
		"toToml":          toTOML,
		"fromToml":        fromTOML,
		"toYaml":          toYAML,
		"fromYaml":        fromYAML,
		"fromYamlArray":   fromYAMLArray,
		"toJson":          toJSON,
		"fromJson":        fromJSON,
		"fromJsonArray":   fromJSONArray,
		namedTemplateFunc: namedTemplate,
		// OSPs compare the kubelet version with semverCompare many times per
		// render; parsing constraint and version dominated the render's cost.
		"semverCompare": semverCompareCached,
	}
	for name, fn := range extra {
		m[name] = fn
	}
	return m
}

// The conversion functions below tolerate errors the way OSPs written for the
// upstream project expect: marshalling yields "" (toToml: the error text) and
// parsing puts the error into the result ("Error" key, or the only element).

func toYAML(v any) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}

func fromYAML(s string) map[string]any {
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func fromYAMLArray(s string) []any {
	a := []any{}
	if err := yaml.Unmarshal([]byte(s), &a); err != nil {
		a = []any{err.Error()}
	}
	return a
}

func toTOML(v any) string {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(v); err != nil {
		return err.Error()
	}
	return b.String()
}

func fromTOML(s string) map[string]any {
	m := map[string]any{}
	if err := toml.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func toJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(data)
}

func fromJSON(s string) map[string]any {
	m := map[string]any{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func fromJSONArray(s string) []any {
	a := []any{}
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		a = []any{err.Error()}
	}
	return a
}

// semverCacheSize bounds the memoized semverCompare results: constraints come
// from OSPs and versions from MachineDeployments, both few in practice.
const semverCacheSize = 4096

var semverResults = lru.New[string, bool](semverCacheSize) // constraint + "\x00" + version

// semverCompareCached is sprig's semverCompare with its results memoized.
func semverCompareCached(constraint, version string) (bool, error) {
	key := constraint + "\x00" + version
	if ok, found := semverResults.Get(key); found {
		return ok, nil
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return false, err
	}
	v, err := semver.NewVersion(version)
	if err != nil {
		return false, err
	}
	ok := c.Check(v)
	semverResults.Add(key, ok)
	return ok, nil
}
