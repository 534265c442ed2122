package defaultosps

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sandbox runs a rendered node script for real, as root, in a chroot onto an
// overlay of the root file system (with its own /proc, /run and /tmp, the
// host's /dev, and its own mount and UTS namespaces): what the script writes
// lands in the overlay and is copied out when it ends. The commands that would
// touch the machine (systemctl, curl, ...) are stubs that log their arguments.
type sandbox struct {
	dir     string // the test's directory: stubs, call log, copied changes; /osm-test inside
	stubs   map[string]string
	env     []string
	prepare string // shell run in the chroot before the script, e.g. mkdir of image paths
}

// sandboxRun is one finished run.
type sandboxRun struct {
	out     string   // the script's stdout and stderr
	err     error    // its exit status
	calls   []string // "name arg ..." of every stub call, in order
	changes string   // a directory holding what the script wrote, by absolute path
}

// requireSandbox skips unless the test can create mount namespaces.
func requireSandbox(t *testing.T) {
	t.Helper()
	requireTools(t, "unshare", "mount", "chroot", "bash", "cp")
	if os.Geteuid() != 0 {
		t.Skip("running node scripts in a chroot onto an overlay needs root (CAP_SYS_ADMIN, CAP_SYS_CHROOT); make test runs as root in CI")
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
root=$OSM_SANDBOX_UPPER/root
mkdir -p "$OSM_SANDBOX_UPPER/upper" "$OSM_SANDBOX_UPPER/work" "$root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$OSM_SANDBOX_UPPER/upper,workdir=$OSM_SANDBOX_UPPER/work" "$root"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/run"
mount -t tmpfs tmpfs "$root/tmp"
mkdir -p "$root/osm-test"
mount --bind "$OSM_SANDBOX_DIR" "$root/osm-test"
set +e
chroot "$root" /bin/bash -c 'eval "$OSM_SANDBOX_PREPARE"; PATH=/osm-test/stubs:$PATH bash /osm-test/script' >"$OSM_SANDBOX_DIR/out" 2>&1
rc=$?
# /run is a tmpfs of its own (gone at a reboot): keep what the script left there too.
mkdir -p "$OSM_SANDBOX_DIR/changes/run" && cp -a "$root/run/." "$OSM_SANDBOX_DIR/changes/run/"
umount -R "$root"
rmdir "$OSM_SANDBOX_UPPER/upper/osm-test" 2>/dev/null
cp -a "$OSM_SANDBOX_UPPER/upper/." "$OSM_SANDBOX_DIR/changes/"
exit $rc
`

func (s *sandbox) run(t *testing.T, script string) sandboxRun {
	t.Helper()
	for _, d := range []string{"stubs", "changes", "upper"} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range s.stubs {
		content := "#!/bin/bash\nprintf '%s\\n' \"" + name + " $*\" >>/osm-test/calls\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(s.dir, "stubs", name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(s.dir, "script"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "--mount", "--uts", "--propagation", "private", "bash", "-c", sandboxWrapper)
	cmd.Env = append(os.Environ(),
		"OSM_SANDBOX_DIR="+s.dir,
		"OSM_SANDBOX_UPPER="+filepath.Join(s.dir, "upper"),
		"OSM_SANDBOX_PREPARE="+s.prepare,
	)
	cmd.Env = append(cmd.Env, s.env...)
	wrapperOut, err := cmd.CombinedOutput()
	out, readErr := os.ReadFile(filepath.Join(s.dir, "out"))
	if readErr != nil {
		t.Fatalf("sandbox did not run the script: %v: %s", err, wrapperOut)
	}
	r := sandboxRun{out: string(out), err: err, changes: filepath.Join(s.dir, "changes")}
	if len(wrapperOut) > 0 {
		r.out += "\n[sandbox] " + string(wrapperOut)
	}
	if log, err := os.ReadFile(filepath.Join(s.dir, "calls")); err == nil {
		r.calls = strings.Split(strings.TrimSuffix(string(log), "\n"), "\n")
	}
	return r
}

// changed returns the content the script left at an absolute path, and
// whether it wrote one.
func (r sandboxRun) changed(path string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(r.changes, path))
	return string(b), err == nil
}

// mode returns the permission bits of what the script left at an absolute
// path, and whether it wrote one.
func (r sandboxRun) mode(path string) (os.FileMode, bool) {
	fi, err := os.Stat(filepath.Join(r.changes, path))
	if err != nil {
		return 0, false
	}
	return fi.Mode().Perm(), true
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
