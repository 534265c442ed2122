package defaultosps

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// TestUbuntuAptProxy: with a node proxy, apt and its timers use it (and go
// direct to the NO_PROXY host names); apt-config reads the file as meant.
func TestUbuntuAptProxy(t *testing.T) {
	requireTools(t, "apt-config")
	const path = "/etc/apt/apt.conf.d/90-osm-proxy.conf"
	for _, proxy := range []bool{true, false} {
		r := renderOSP(t, "osp-ubuntu", "aws", "", func(in *render.Input) {
			if !proxy {
				in.Node.HTTPProxy = ""
			}
		})
		conf, ok := r.provisioning[path]
		if !ok {
			t.Fatalf("osp-ubuntu writes no %s", path)
		}
		added := aptConfigAdds(t, conf)
		var want []string
		if proxy {
			want = []string{
				`Acquire::http::Proxy "` + proxyURL + `";`,
				`Acquire::http::Proxy::api.cluster.example.com "DIRECT";`,
				`Acquire::https::Proxy "` + proxyURL + `";`,
				`Acquire::https::Proxy::api.cluster.example.com "DIRECT";`,
			}
		}
		if !slices.Equal(added, want) {
			t.Errorf("proxy %v: %s adds to apt's configuration:\n%s\nwant:\n%s\nfile:\n%s", proxy, path,
				strings.Join(added, "\n"), strings.Join(want, "\n"), conf)
		}
	}
}

// aptConfigAdds returns the apt settings a configuration file adds to the
// host's, as `apt-config dump` prints them, sorted.
func aptConfigAdds(t *testing.T, conf string) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "osm.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	base, err := exec.Command("apt-config", "dump").Output()
	if err != nil {
		t.Fatalf("apt-config dump: %v", err)
	}
	with, err := exec.Command("apt-config", "-c", path, "dump").CombinedOutput()
	if err != nil {
		t.Fatalf("apt-config -c %s dump: %v: %s", path, err, with)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(base), "\n") {
		have[l] = true
	}
	var added []string
	for _, l := range strings.Split(string(with), "\n") {
		// Skip the command line and the empty tree nodes above new settings.
		if !have[l] && strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "CommandLine::") && !strings.HasSuffix(l, ` "";`) {
			added = append(added, l)
		}
	}
	slices.Sort(added)
	return added
}
