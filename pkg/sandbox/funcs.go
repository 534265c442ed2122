package sandbox

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"text/template"

	"github.com/Masterminds/semver/v3"

	"github.com/BurntSushi/toml"
	"github.com/Masterminds/sprig/v3"
	"gopkg.in/yaml.v3"

	"github.com/osm-apiserver/osm-apiserver/pkg/lru"
)

// removedFuncs are sprig's functions templates cannot call: they read the
// server's environment, files or the network, or take unbounded time or
// memory in one call that no budget can interrupt (docs/templates.md).
var removedFuncs = []string{
	"env", "expandenv", // the server's environment
	"getHostByName", // the network
	// Key generation: DSA parameters take minutes, RSA seconds, scrypt 32 MiB.
	"genPrivateKey", "genCA", "genCAWithKey", "genSelfSignedCert", "genSelfSignedCertWithKey",
	"genSignedCert", "genSignedCertWithKey", "derivePassword",
}

// templateFuncs are the functions templates can call, each with how it is
// bounded (funcset.go); funcMap is the same set for the parser. Both are built
// once: sprig.TxtFuncMap allocates a fresh map of ~200 functions on every call.
var templateFuncs, funcMap = buildFuncs()

func buildFuncs() (map[string]templateFunc, template.FuncMap) {
	m := sprig.TxtFuncMap()
	for _, name := range removedFuncs {
		delete(m, name)
	}
	for name, fn := range ourFuncs() {
		m[name] = fn
	}
	funcs := make(map[string]templateFunc, len(m)+len(boundFuncs))
	for name, fn := range m {
		funcs[name] = templateFunc{fn: fn, limit: limitOf(name)}
	}
	for name, f := range boundFuncs {
		funcs[name] = templateFunc{bound: f}
	}
	funcs[namedTemplateFunc] = templateFunc{bound: namedTemplate}
	return funcs, m
}

// scalarFuncs return a string, number or bool: their result prints safely.
var scalarFuncs = func() map[string]bool {
	m := map[string]bool{"print": true, "printf": true, "println": true, "html": true, "js": true, "urlquery": true,
		"len": true, "not": true, "eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true}
	for name, fn := range funcMap {
		switch reflect.TypeOf(fn).Out(0).Kind() {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			m[name] = true
		}
	}
	return m
}()

// ourFuncs replace or add to sprig's.
func ourFuncs() template.FuncMap {
	return template.FuncMap{
		"toToml":          toTOML,
		"fromToml":        fromTOML,
		"toYaml":          toYAML,
		"fromYaml":        fromYAML,
		"fromYamlArray":   fromYAMLArray,
		"toJson":          toJSON,
		"fromJson":        fromJSON,
		"fromJsonArray":   fromJSONArray,
		namedTemplateFunc: unboundNamedTemplate,
		// Templates compare versions with semverCompare many times per
		// execution; parsing constraint and version dominated its cost.
		"semverCompare": semverCompareCached,
		"uniq":          uniqList,
		"mustUniq":      uniqList,
		// Dates are UTC: the server's time zone is part of its environment.
		"now": nowUTC, "date": dateUTC, "htmlDate": htmlDateUTC, "toDate": toDateUTC, "mustToDate": mustToDateUTC,
		"dateInZone": dateInZone, "date_in_zone": dateInZone, "htmlDateInZone": htmlDateInZone,
		// Regular expressions with their work and results bounded (funcs_regex.go).
		"regexMatch": regexMatch, "mustRegexMatch": regexMatch,
		"regexFind": regexFind, "mustRegexFind": regexFind,
		"regexFindAll": regexFindAll, "mustRegexFindAll": regexFindAll,
		"regexSplit": regexSplit, "mustRegexSplit": regexSplit,
		"regexReplaceAll": regexReplaceAll, "mustRegexReplaceAll": regexReplaceAll,
		"regexReplaceAllLiteral": regexReplaceAllLiteral, "mustRegexReplaceAllLiteral": regexReplaceAllLiteral,
	}
}

// The conversion functions below tolerate errors as Helm's do, which
// templates written for sprig-based engines expect: marshalling yields ""
// (toToml: the error text) and parsing puts the error into the result
// ("Error" key, or the only element).

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

// semverCacheSize bounds the memoized semverCompare results: constraints are
// written in templates and versions come from their data, both few in
// practice.
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
