package cloudinit

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// requireTool fails, not skips, when a tool is missing: `make test` installs
// them (hack/install-test-deps.sh), and CI runs that.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: run hack/install-test-deps.sh", name)
	}
	return path
}

func stderr(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// TestSchema runs Debian's `cloud-init schema` on every golden output and on our
// encoding of upstream's cases.
func TestSchema(t *testing.T) {
	cloudInit := requireTool(t, "cloud-init")
	docs := map[string][]byte{}
	for _, tc := range goldenCases {
		out, err := Encode(tc.cfg, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		docs[tc.name] = out
	}
	if _, err := os.Stat(casesDir); err == nil {
		for _, c := range loadUpstreamCases(t) {
			for pt := range c.expected {
				docs[c.name+"-"+string(pt)] = encodeCase(t, c, pt)
			}
		}
	}
	dir := t.TempDir()
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each run starts Python: about a second
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, doc, 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(cloudInit, "schema", "--config-file", path).CombinedOutput(); err != nil {
				t.Errorf("cloud-init schema: %v\n%s\n--- document:\n%s", err, out, doc)
			}
		})
	}
}
