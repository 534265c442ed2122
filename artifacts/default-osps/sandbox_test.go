package defaultosps

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sandbox runs a rendered node script for real, as root, in a private mount
// namespace: /etc, /var and /opt are overlays whose changes are copied out
// when the script ends, and the commands that would touch the machine
// (systemctl, cloud-init, curl, ...) are stubs that log their arguments.
type sandbox struct {
	dir     string // the test's directory: stubs, call log, copied changes
	stubs   map[string]string
	env     []string
	prepare string // shell run inside the namespace before the script, e.g. mkdir of image paths
}

// sandboxRun is one finished run.
type sandboxRun struct {
	out     string   // the script's stdout and stderr
	err     error    // its exit status
	calls   []string // "name arg ..." of every stub call, in order
	changes string   // a directory holding etc/, var/, opt/ with what the script wrote there
}

// requireSandbox skips unless the test can create mount and network namespaces.
func requireSandbox(t *testing.T) {
	t.Helper()
	requireTools(t, "unshare", "mount", "bash", "cp")
	if os.Geteuid() != 0 {
		t.Skip("running node scripts in mount namespaces with overlays needs root (CAP_SYS_ADMIN); make test runs as root in CI")
	}
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	return &sandbox{dir: t.TempDir(), stubs: map[string]string{}}
}

// stub installs a command that logs "name args" and then runs body (bash).
func (s *sandbox) stub(name, body string) {
	s.stubs[name] = body
}

const sandboxWrapper = `set -euo pipefail
mount -t tmpfs osm-test "$OSM_SANDBOX_UPPER"
for d in etc var opt; do
  mkdir -p "$OSM_SANDBOX_UPPER/$d" "$OSM_SANDBOX_UPPER/$d.work"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$OSM_SANDBOX_UPPER/$d,workdir=$OSM_SANDBOX_UPPER/$d.work" "/$d"
done
eval "$OSM_SANDBOX_PREPARE"
set +e
PATH="$OSM_SANDBOX_STUBS:$PATH" bash "$OSM_SANDBOX_SCRIPT" >"$OSM_SANDBOX_OUT" 2>&1
rc=$?
for d in etc var opt; do cp -a "$OSM_SANDBOX_UPPER/$d" "$OSM_SANDBOX_CHANGES/"; done
exit $rc
`

func (s *sandbox) run(t *testing.T, script string) sandboxRun {
	t.Helper()
	stubs := filepath.Join(s.dir, "stubs")
	changes := filepath.Join(s.dir, "changes")
	upper := filepath.Join(s.dir, "upper")
	for _, d := range []string{stubs, changes, upper} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	calls := filepath.Join(s.dir, "calls")
	for name, body := range s.stubs {
		content := "#!/bin/bash\nprintf '%s\\n' \"" + name + " $*\" >>\"$OSM_SANDBOX_CALLS\"\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(stubs, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(s.dir, "script")
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(s.dir, "out")
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "bash", "-c", sandboxWrapper)
	cmd.Env = append(os.Environ(),
		"OSM_SANDBOX_UPPER="+upper,
		"OSM_SANDBOX_STUBS="+stubs,
		"OSM_SANDBOX_SCRIPT="+path,
		"OSM_SANDBOX_OUT="+outFile,
		"OSM_SANDBOX_CHANGES="+changes,
		"OSM_SANDBOX_CALLS="+calls,
		"OSM_SANDBOX_PREPARE="+s.prepare,
	)
	cmd.Env = append(cmd.Env, s.env...)
	wrapperOut, err := cmd.CombinedOutput()
	out, readErr := os.ReadFile(outFile)
	if readErr != nil {
		t.Fatalf("sandbox did not run the script: %v: %s", err, wrapperOut)
	}
	r := sandboxRun{out: string(out), err: err, changes: changes}
	if log, err := os.ReadFile(calls); err == nil {
		r.calls = strings.Split(strings.TrimSuffix(string(log), "\n"), "\n")
	}
	return r
}

// changed returns the content the script left at an absolute path under
// /etc, /var or /opt, and whether it wrote one.
func (r sandboxRun) changed(path string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(r.changes, path))
	return string(b), err == nil
}

// called returns the stub calls that start with prefix.
func (r sandboxRun) called(prefix string) []string {
	var found []string
	for _, c := range r.calls {
		if strings.HasPrefix(c, prefix) {
			found = append(found, c)
		}
	}
	return found
}
