package facts

import (
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// The version of the facts is part of every resourceVersion an OSC reader
// sees: it changes with the facts, never with a credential's value alone
// (a hash of a password would let readers test guesses), and it changes with
// the Secret the registry credentials came from.
func TestVersionHidesCredentials(t *testing.T) {
	cluster := render.ClusterInfo{ServerURL: "https://10.0.0.1:6443", CACert: "ca"}
	facts := func(password, proxy string, dns string) *Facts {
		f, err := New(cluster, render.NodeOptions{
			ClusterDNSIPs:       []string{dns},
			HTTPProxy:           proxy,
			RegistryCredentials: map[string]render.RegistryAuth{"registry.example.com": {Username: "u", Password: password}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	base := facts("secret-1", "http://user:pass-1@proxy:3128", "10.0.0.10")
	for name, other := range map[string]*Facts{
		"registry password": facts("secret-2", "http://user:pass-1@proxy:3128", "10.0.0.10"),
		"proxy password":    facts("secret-1", "http://user:pass-2@proxy:3128", "10.0.0.10"),
	} {
		if other.Hash() == base.Hash() {
			t.Errorf("%s: the facts' hash (render cache key) must change", name)
		}
		if other.Version() != base.Version() {
			t.Errorf("%s: the version reveals a credential", name)
		}
	}
	if facts("secret-1", "http://user:pass-1@proxy:3128", "10.0.0.11").Version() == base.Version() {
		t.Error("the version does not change with the cluster DNS")
	}
	a, b := facts("secret-1", "", "10.0.0.10"), facts("secret-1", "", "10.0.0.10")
	a.withCredentialsVersion("41")
	b.withCredentialsVersion("42")
	if a.Version() == b.Version() {
		t.Error("the version does not change with the registry Secret")
	}
}
