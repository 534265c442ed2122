package defaultosps

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

func TestInsecureDownloads(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"curl -fsSL --cacert /etc/ca.crt https://x", 0},
		{"curl -k https://x", 1},
		{"curl -s -k -v https://x | jq", 1},
		{"curl -fsSk https://x", 1},
		{"curl --insecure https://x", 1},
		{"wget --no-check-certificate https://x", 1},
		{"curl -fsS \\\n  -k https://x", 1},
		{"grep -k pattern file", 0},
		{"sort -k2 file", 0},
	} {
		if got := insecureDownloads(tc.text); len(got) != tc.want {
			t.Errorf("insecureDownloads(%q) = %q, want %d finding(s)", tc.text, got, tc.want)
		}
	}
}

func TestDownloadChecks(t *testing.T) {
	script := "kube_url=${OSM_KUBERNETES_URL:-https://dl.k8s.io/release}\n" +
		"cni_url=${OSM_CNI_URL:-\nhttps://github.com/x}\n" +
		"curl -fsSL https://example.com/file\n" +
		"curl --cacert ca https://api.cluster.example.com:6443/api\n"
	d := downloadDefaults(script)
	if d["OSM_KUBERNETES_URL"] != "https://dl.k8s.io/release" {
		t.Errorf("OSM_KUBERNETES_URL default = %q", d["OSM_KUBERNETES_URL"])
	}
	if _, ok := d["OSM_CNI_URL"]; ok {
		t.Error("a default split over two lines counted as a default")
	}
	got := hardcodedURLs(script, serverURL)
	if len(got) != 2 || got[0] != "https://github.com/x" || got[1] != "https://example.com/file" {
		t.Errorf("hardcodedURLs = %q, want the split default and example.com", got)
	}
}

func TestScriptChecksFail(t *testing.T) {
	requireTools(t, "bash", "shellcheck")
	for _, bad := range []string{
		"#!/bin/bash\nif true; then\n",      // bash -n
		"#!/bin/bash\n[[ $a == b ]\n",       // bash -n
		"#!/bin/bash\nfor f in *.txt\necho", // bash -n
	} {
		if err := checkScript(t.TempDir(), []byte(bad)); err == nil {
			t.Errorf("checkScript accepted %q", bad)
		}
	}
	if err := checkScript(t.TempDir(), []byte("#!/bin/bash\necho \"$((1 +\"\n")); err == nil {
		t.Error("checkScript accepted an unterminated arithmetic expansion")
	}
}

func TestCloudInitSchemaFails(t *testing.T) {
	requireTools(t, "cloud-init")
	bad := "#cloud-config\nwrite_files:\n- path: /x\n  permissions: 644\n  encoding: nonsense\n"
	if err := cloudInitSchema(t.TempDir(), []byte(bad)); err == nil {
		t.Error("cloud-init schema accepted an invalid write_files entry")
	}
}

// sizes collects the bootstrap payload sizes per profile for the report
// printed after the tests (go test -v).
type sizes struct {
	mu  sync.Mutex
	max map[string]int
}

var bootstrapSizes = &sizes{}

func (s *sizes) record(osp string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.max == nil {
		s.max = map[string]int{}
	}
	s.max[osp] = max(s.max[osp], n)
}

func (s *sizes) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var lines []string
	for osp, n := range s.max {
		lines = append(lines, fmt.Sprintf("  %-24s %6d bytes", osp, n))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if testing.Verbose() && len(bootstrapSizes.max) > 0 {
		fmt.Printf("largest bootstrap payload per profile (with 4 KiB of SSH keys):\n%s\n", bootstrapSizes)
	}
	os.Exit(code)
}
