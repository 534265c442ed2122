package cloudinit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// appendModules appends the cloud-init modules an OSP (or the render engine, for
// rh_subscription) sets. Upstream pastes the values of rh_subscription and
// yum_repos into its YAML unquoted, so "false" becomes a boolean and "[a, b]" a
// list; we reproduce those types deliberately, per key where cloud-init's
// schema says which type it wants, and quote everything else.
func appendModules(b []byte, m *osm.CloudInitModule) ([]byte, error) {
	if m == nil {
		return b, nil
	}
	var err error
	if b, err = appendList(b, "bootcmd", m.BootCMD); err != nil {
		return nil, err
	}
	if b, err = appendList(b, "runcmd", m.RunCMD); err != nil {
		return nil, err
	}
	if b, err = appendRHSubscription(b, m.RHSubscription); err != nil {
		return nil, err
	}
	if b, err = appendYumRepos(b, m.YumRepos); err != nil {
		return nil, err
	}
	if m.YumRepoDir != "" {
		b = append(b, "yum_repo_dir: "...)
		if b, err = appendQuoted(b, m.YumRepoDir); err != nil {
			return nil, fmt.Errorf("yum_repo_dir: %w", err)
		}
		b = append(b, '\n')
	}
	return b, nil
}

// appendRHSubscription appends rh_subscription. Keys without a value are left
// out: upstream writes them as null, which cloud-init's schema rejects and which
// means the same to cloud-init as an absent key.
func appendRHSubscription(b []byte, sub map[string]string) ([]byte, error) {
	keys := setKeys(sub)
	if len(keys) == 0 {
		return b, nil
	}
	b = append(b, "rh_subscription:\n"...)
	var err error
	for _, k := range keys {
		v := sub[k]
		b = append(b, "  "...)
		if b, err = appendQuoted(b, k); err != nil {
			return nil, fmt.Errorf("rh_subscription key %q: %w", k, err)
		}
		b = append(b, ": "...)
		switch k {
		case "auto-attach":
			t, ok := yamlBool(v)
			if !ok {
				return nil, fmt.Errorf("rh_subscription auto-attach: %q is not a boolean", v)
			}
			b = append(b, t...)
		case "org":
			if isDecimal(v) {
				b = append(b, v...)
			} else {
				b, err = appendQuoted(b, v)
			}
		case "add-pool", "enable-repo", "disable-repo":
			b = append(b, '[')
			for i, item := range splitList(v) {
				if i > 0 {
					b = append(b, ", "...)
				}
				if b, err = appendQuoted(b, item); err != nil {
					break
				}
			}
			b = append(b, ']')
		default:
			b, err = appendQuoted(b, v)
		}
		if err != nil {
			return nil, fmt.Errorf("rh_subscription %s: %w", k, err)
		}
		b = append(b, '\n')
	}
	return b, nil
}

// appendYumRepos appends yum_repos: booleans and decimal integers as such, the
// rest as strings, all of which cloud-init writes into the repo file.
func appendYumRepos(b []byte, repos map[string]map[string]string) ([]byte, error) {
	if len(repos) == 0 {
		return b, nil
	}
	var err error
	header := false
	for _, name := range slices.Sorted(maps.Keys(repos)) {
		// A repo without settings means nothing to cloud-init, and its schema
		// rejects one without a baseurl.
		keys := setKeys(repos[name])
		if len(keys) == 0 {
			continue
		}
		if !header {
			b, header = append(b, "yum_repos:\n"...), true
		}
		b = append(b, "  "...)
		if b, err = appendQuoted(b, name); err != nil {
			return nil, fmt.Errorf("yum_repos key %q: %w", name, err)
		}
		b = append(b, ":\n"...)
		for _, k := range keys {
			v := repos[name][k]
			b = append(b, "    "...)
			if b, err = appendQuoted(b, k); err != nil {
				return nil, fmt.Errorf("yum_repos %s key %q: %w", name, k, err)
			}
			b = append(b, ": "...)
			if t, ok := yamlBool(v); ok {
				b = append(b, t...)
			} else if isDecimal(v) {
				b = append(b, v...)
			} else if b, err = appendQuoted(b, v); err != nil {
				return nil, fmt.Errorf("yum_repos %s %s: %w", name, k, err)
			}
			b = append(b, '\n')
		}
	}
	return b, nil
}

// setKeys returns the keys of m with a non-empty value, sorted.
func setKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != "" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// yamlBool returns the canonical form of v if YAML 1.1 (PyYAML) reads it as a boolean.
func yamlBool(v string) (string, bool) {
	switch v {
	case "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON":
		return "true", true
	case "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF":
		return "false", true
	}
	return "", false
}

// isDecimal reports whether v is a decimal integer that reads the same in YAML
// 1.1 and 1.2 (no leading zero, which YAML 1.1 reads as octal).
func isDecimal(v string) bool {
	d := strings.TrimPrefix(v, "-")
	if d == "" || len(d) > 18 || (d[0] == '0' && len(d) > 1) {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// splitList reads "[a, b]", "a, b" or "a" as a list of strings.
func splitList(v string) []string {
	v = strings.TrimSpace(v)
	v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	var items []string
	for item := range strings.SplitSeq(v, ",") {
		item = strings.Trim(strings.TrimSpace(item), `"'`)
		if item != "" {
			items = append(items, item)
		}
	}
	return items
}
