package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpstreamContainerdGoldens checks config.toml and the hosts.toml files
// against upstream's own golden files (testdata/upstream-containerd/README.md);
// the inputs are upstream's, given as the equivalent node options.
func TestUpstreamContainerdGoldens(t *testing.T) {
	tests := []struct {
		name string
		node NodeOptions
	}{
		{"mixed_registries", NodeOptions{
			InsecureRegistries: []string{"insecure.example.com"},
			ContainerdRegistryMirrors: map[string][]string{
				"docker.io":            {"https://harbor.example.com/v2/proxy-docker-io?kubermatic=override_path%3Dtrue"},
				"quay.io":              {"https://harbor.example.com/v2/proxy-quay-io?kubermatic=override_path%3Dtrue"},
				"reg.tld":              {"https://simple-mirror.example.com"},
				"insecure.example.com": {"https://mirror.example.com"},
			},
		}},
		{"two_mirrors_same_registry_one_with_override_path_one_without", NodeOptions{
			ContainerdRegistryMirrors: map[string][]string{
				"ghcr.io": {"https://harbor.example.com/v2/proxy-ghcr-io?kubermatic=override_path%3Dtrue", "https://harbor.example.com"},
			},
		}},
		{"registry_credentials_with_url_scheme", NodeOptions{
			RegistryCredentials: map[string]RegistryAuth{"https://my-registry.example.com": {Username: "user", Password: "pass"}},
		}},
		{"default_mirror", NodeOptions{ContainerdRegistryMirrors: map[string][]string{"_default": {"https://mirror.example.com"}}}},
		{"mirror_without_scheme", NodeOptions{ContainerdRegistryMirrors: map[string][]string{"reg.tld": {"mirror.example.com"}}}},
		{"broken_kubermatic_param", NodeOptions{ContainerdRegistryMirrors: map[string][]string{"reg.tld": {"https://broken.tld?kubermatic=override_path%3Dzzzz"}}}},
		{"empty_kubermatic_param", NodeOptions{ContainerdRegistryMirrors: map[string][]string{"reg.tld": {"https://empty.tld?kubermatic="}}}},
		{"insecure_registry", NodeOptions{InsecureRegistries: []string{"insecure.example.com"}}},
		{"registry_in_subpath", NodeOptions{ContainerdRegistryMirrors: map[string][]string{"gitlab.com": {"https://mirror.gitlab.com/project/repo?kubermatic=override_path%3Dtrue"}}}},
		{"insecure_and_override_path", NodeOptions{
			InsecureRegistries:        []string{"insecure.example.com"},
			ContainerdRegistryMirrors: map[string][]string{"insecure.example.com": {"https://mirror.example.com/v2/proxy?kubermatic=override_path%3Dtrue"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "upstream-containerd", tt.name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			b.WriteString("# /etc/containerd/config.toml\n")
			b.WriteString(containerdConfig(&tt.node))
			for _, f := range registryHostFiles(&tt.node) {
				b.WriteString("---\n# " + f.Path + "\n")
				b.WriteString(f.Content.Inline.Data)
			}
			if got := b.String(); got != string(want) {
				t.Errorf("containerd files differ from upstream's\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}

// TestRegistrySubpathHostsFile: a registry name with a path gets its hosts.toml
// in the directory of its host[:port], with the full name as server, as upstream.
func TestRegistrySubpathHostsFile(t *testing.T) {
	n := NodeOptions{ContainerdRegistryMirrors: map[string][]string{"registry.example.com:5000/library": {"https://mirror.example.com"}}}
	files := registryHostFiles(&n)
	want := "/etc/containerd/certs.d/registry.example.com:5000/hosts.toml"
	for _, f := range files {
		if f.Path == want {
			if got := f.Content.Inline.Data; got != "server = \"registry.example.com:5000/library\"\n\n[host.\"https://mirror.example.com\"]\ncapabilities = [\"pull\", \"resolve\"]\n" {
				t.Errorf("%s:\n%s", want, got)
			}
			return
		}
	}
	t.Errorf("no %s among %d files", want, len(files))
}

// TestRegistryHostFilesOnePerPath: registries that share a certs.d directory
// ("*" and "_default", or a host and a path under it) yield one hosts.toml, the
// last registry name in sort order winning, as upstream's path-keyed map does.
func TestRegistryHostFilesOnePerPath(t *testing.T) {
	n := NodeOptions{ContainerdRegistryMirrors: map[string][]string{
		"*":                     {"https://star.example.com"},
		"_default":              {"https://default.example.com"},
		"quay.io":               {"https://quay-mirror.example.com"},
		"quay.io/organization1": {"https://org-mirror.example.com"},
	}}
	seen := map[string]string{}
	for _, f := range registryHostFiles(&n) {
		if _, dup := seen[f.Path]; dup {
			t.Errorf("%s written twice", f.Path)
		}
		seen[f.Path] = f.Content.Inline.Data
	}
	for path, host := range map[string]string{
		"/etc/containerd/certs.d/_default/hosts.toml": "https://default.example.com",
		"/etc/containerd/certs.d/quay.io/hosts.toml":  "https://org-mirror.example.com",
	} {
		if !strings.Contains(seen[path], host) {
			t.Errorf("%s:\n%s\nwant host %s", path, seen[path], host)
		}
	}
}
