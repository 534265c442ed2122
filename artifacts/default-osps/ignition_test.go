package defaultosps

// TestIgnitionAppliesFlatcarPayloads applies the Ignition payloads of
// osp-flatcar with Ignition itself (hack/build-ignition.sh builds the version
// hack/tools/ignition/go.mod pins) and then runs the scripts Ignition wrote.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	ignition "github.com/coreos/ignition/v2/config"
	igntypes "github.com/coreos/ignition/v2/config/v3_6_experimental/types"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// TestIgnitionAppliesFlatcarPayloads renders osp-flatcar for every cloud it
// supports and, as a Flatcar node would:
//
//  1. applies the bootstrap payload of an IPv4 MD with Ignition's
//     fetch-offline and files stages to an empty root, and checks that
//     Ignition wrote every file, unit, drop-in, preset and user the payload
//     declares, and nothing else (a dual-stack MD's payloads are applied and
//     checked likewise, at the end);
//  2. runs the osm-bootstrap Ignition wrote, in the sandbox, with real curl
//     against a local TLS server that answers the MachineJoin with the
//     provisioning payload: it must stage that payload as the OEM config.ign
//     and flag a first boot;
//  3. applies the config.ign it staged, as Ignition does on that first boot,
//     to a second root, with the same checks;
//  4. runs the osm-setup Ignition wrote, in the sandbox, on that root plus
//     what the bootstrap left: real curl, sha256sum and tar download fake
//     CNI plugins, crictl, kubelet and kubectl from the local server, and
//     osm-report posts every step to it.
//
// Not run: Ignition's kargs, disks, mount and umount stages, which partition,
// format and mount block devices (the payloads declare none, which the test
// checks, so they would have nothing to do); systemd itself (systemctl is a
// stub that logs in the sandbox; `systemctl --root` only applies the presets);
// sysctl, swapoff and update-ca-certificates (stubs: they would act on the
// host); the reboot; containerd and the kubelet (their binaries are fakes);
// and the health monitors. docs/default-osps.md, "Ignition, applied".
func TestIgnitionAppliesFlatcarPayloads(t *testing.T) {
	requireRoot(t)
	requireSandbox(t)
	requireTools(t, "curl", "sha256sum", "tar", "gzip", "useradd", "systemctl", "base64", "sed", "tr", "od")
	bin := ignitionBinary(t)

	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(osps, func(o *ospv1alpha1.OperatingSystemProfile) bool { return o.Name == "osp-flatcar" })
	if i < 0 {
		t.Fatal("no default profile osp-flatcar")
	}
	srv := newNodeServer(t)
	for _, c := range osps[i].Spec.SupportedCloudProviders {
		cloud := string(c.Name)
		t.Run(cloud, func(t *testing.T) {
			r := renderOSP(t, "osp-flatcar", cloud, "", srv.edit)
			if r.res.Bootstrap.Format != "ignition" || r.res.Provisioning.Format != "ignition" {
				t.Fatalf("payload formats %q and %q, want Ignition", r.res.Bootstrap.Format, r.res.Provisioning.Format)
			}
			srv.reset(r.res.Provisioning.UserData)

			bootRoot := applyIgnition(t, bin, "bootstrap", machineNamed(r.res.Bootstrap.UserData))
			if got, _ := os.ReadFile(filepath.Join(bootRoot, "etc/osm/machine-name")); strings.TrimSpace(string(got)) != testMachine {
				t.Errorf("bootstrap: /etc/osm/machine-name = %q, want %s", got, testMachine)
			}

			checkStartsAtBoot(t, bootRoot, "osm-bootstrap.service")
			boot := runInSandbox(t, bootRoot, "", "/opt/bin/osm-bootstrap")
			if boot.err != nil {
				t.Fatalf("osm-bootstrap: %v\n%s\ncalls:\n%s", boot.err, boot.out, strings.Join(boot.calls, "\n"))
			}
			srv.checkJoin(t)
			staged, ok := boot.changed("/usr/share/oem/config.ign")
			if !ok || staged != string(r.res.Provisioning.UserData) {
				t.Fatalf("osm-bootstrap staged /usr/share/oem/config.ign = %d bytes (written: %v), want the provisioning payload (%d bytes)",
					len(staged), ok, len(r.res.Provisioning.UserData))
			}
			if mode, _ := boot.mode("/usr/share/oem/config.ign"); mode != 0o600 {
				t.Errorf("config.ign has mode %o, want 600 (it carries the fetch token)", mode)
			}
			if _, ok := boot.changed("/boot/flatcar/first_boot"); !ok {
				t.Error("osm-bootstrap did not flag a first boot (/boot/flatcar/first_boot): Ignition would not run")
			}
			if got, _ := boot.changed("/etc/kubernetes/bootstrap-kubelet.conf"); got != testKubeconfig {
				t.Errorf("bootstrap-kubelet.conf = %q, want the answer's kubeconfig", got)
			}
			if fi, err := os.Lstat(filepath.Join(boot.changes, "etc/machine-id")); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
				t.Error("osm-bootstrap did not remove /etc/machine-id: systemd would not apply Ignition's presets on the first boot")
			}
			if len(boot.called("systemctl reboot")) != 1 {
				t.Errorf("osm-bootstrap did not reboot into the first boot; calls:\n%s", strings.Join(boot.calls, "\n"))
			}

			// The first boot: Ignition applies what the bootstrap staged.
			provRoot := applyIgnition(t, bin, "provisioning", []byte(staged))
			// What the bootstrap left on the root file system stays for the setup.
			// (/etc/machine-id, which it removed, is a whiteout of the sandbox's overlay there.)
			if err := copyTree(boot.changes, provRoot, "/run", "/usr/share/oem", "/boot", "/etc/machine-id"); err != nil {
				t.Fatal(err)
			}
			checkStartsAtBoot(t, provRoot, "osm-setup.service")
			dl := srv.downloads.URL
			env := "OSM_KUBERNETES_URL=" + dl + "/kube\nOSM_CNI_URL=" + dl + "/cni\nOSM_CRICTL_URL=" + dl + "/crictl\n"
			setup := runInSandbox(t, provRoot, env, "/opt/bin/osm-setup")
			if setup.err != nil {
				t.Fatalf("osm-setup: %v\n%s\ncalls:\n%s", setup.err, setup.out, strings.Join(setup.calls, "\n"))
			}
			checkSetup(t, setup, srv)

			// A dual-stack MD's payloads differ (an external cloud provider, the
			// IPv6 networkd drop-in): Ignition applies them too; the scripts
			// ran above.
			ds := renderOSP(t, "osp-flatcar", cloud, "IPv4+IPv6", srv.edit)
			applyIgnition(t, bin, "dual-stack bootstrap", machineNamed(ds.res.Bootstrap.UserData))
			applyIgnition(t, bin, "dual-stack provisioning", ds.res.Provisioning.UserData)
		})
	}
}

// machineNamed puts the machine's name into an Ignition bootstrap payload, as
// machine-controller does.
func machineNamed(userData []byte) []byte {
	b := bytes.ReplaceAll(userData, []byte("<MACHINE_NAME>"), []byte(testMachine))
	return bytes.ReplaceAll(b, []byte("%3CMACHINE_NAME%3E"), []byte(testMachine))
}

// requireRoot fails, not skips, a test that needs root: Ignition chowns,
// runs useradd --root (a chroot) and the sandbox mounts. CI runs as root.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("applying Ignition payloads needs root (chown, useradd --root, mounts of the sandbox); run as root, e.g. sudo -E go test -run TestIgnition ./artifacts/default-osps/")
	}
}

var ignitionBuild struct {
	once sync.Once
	bin  string
	err  error
	out  string
}

// ignitionBinary builds Ignition with hack/build-ignition.sh (cached once per
// version; minutes the first time, docs/benchmarks.md) and returns its path.
func ignitionBinary(t *testing.T) string {
	t.Helper()
	ignitionBuild.once.Do(func() {
		t.Log("building Ignition with hack/build-ignition.sh (cached after the first build)")
		cmd := exec.Command("../../hack/build-ignition.sh")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		ignitionBuild.bin, ignitionBuild.err, ignitionBuild.out = strings.TrimSpace(string(out)), err, stderr.String()
	})
	if ignitionBuild.err != nil {
		t.Fatalf("hack/build-ignition.sh: %v\n%s", ignitionBuild.err, ignitionBuild.out)
	}
	return ignitionBuild.bin
}

// skeletonPasswd is the sandbox root's /etc before Ignition: root only, so
// Ignition must create the core user (with useradd --root) itself.
var skeletonPasswd = map[string]string{
	"etc/passwd":  "root:x:0:0:root:/root:/bin/bash\n",
	"etc/group":   "root:x:0:\n",
	"etc/shadow":  "root:*:19000:0:99999:7:::\n",
	"etc/gshadow": "root:*::\n",
}

// applyIgnition runs Ignition's fetch-offline and files stages with config
// against a new root and checks what it wrote there; it returns the root.
func applyIgnition(t *testing.T, bin, name string, config []byte) string {
	t.Helper()
	dir := t.TempDir()
	// Ignition writes a user's SSH keys as that user: it must reach the root.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(dir, "root")
	for path, content := range skeletonPasswd {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfgFile := filepath.Join(dir, "config.ign")
	if err := os.WriteFile(cfgFile, config, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "base.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, stage := range []string{"fetch-offline", "files"} {
		cmd := exec.Command(bin, "--root="+root, "--stage="+stage, "--platform=file", "--log-to-stdout",
			// Ignition keeps its state in /run by default: here it stays in the test's directory.
			"--config-cache="+filepath.Join(dir, "ignition.json"), "--state-file="+filepath.Join(dir, "state"),
			"--neednet="+filepath.Join(dir, "neednet"))
		// No base config of the host's (/usr/lib/ignition) is merged in.
		cmd.Env = append(os.Environ(), "IGNITION_CONFIG_FILE="+cfgFile, "SYSTEM_CONFIG_DIR="+filepath.Join(dir, "base.d"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			// Not the full config Ignition prints after its log: it holds the fetch token.
			log, _, _ := strings.Cut(string(out), "Full config:")
			t.Fatalf("%s: ignition --stage=%s: %v\n%s", name, stage, err, log)
		}
		if _, err := os.Stat(filepath.Join(dir, "neednet")); err == nil {
			t.Fatalf("%s: Ignition's fetch-offline stage asks for the network: the payload references remote resources\n%s", name, out)
		}
	}
	cfg, _, err := ignition.Parse(config)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	checkIgnitionRoot(t, name, root, cfg)
	return root
}

// checkIgnitionRoot checks that root holds what cfg declares, as Ignition
// writes it, and nothing else but Ignition's own bookkeeping.
func checkIgnitionRoot(t *testing.T, name, root string, cfg igntypes.Config) {
	t.Helper()
	s := cfg.Storage
	if len(s.Disks)+len(s.Filesystems)+len(s.Raid)+len(s.Luks) > 0 || len(cfg.KernelArguments.ShouldExist)+len(cfg.KernelArguments.ShouldNotExist) > 0 {
		t.Errorf("%s: the payload declares disks, filesystems, RAID, LUKS or kernel arguments, which this test does not apply (no disks stage)", name)
	}
	expected := map[string]bool{} // paths the config accounts for
	for _, f := range s.Files {
		expected[f.Path] = true
		p := filepath.Join(root, f.Path)
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: Ignition wrote no file %s: %v", name, f.Path, err)
			continue
		}
		want, err := ignitionContent(f.Contents.Source, f.Contents.Compression)
		if err != nil {
			t.Fatalf("%s: file %s: %v", name, f.Path, err)
		}
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("%s: %s holds %d bytes, the payload says %d", name, f.Path, len(got), len(want))
		}
		wantMode := 0o644 // Ignition's default for files
		if f.Mode != nil {
			wantMode = *f.Mode
		}
		if got := unixMode(fi); got != wantMode {
			t.Errorf("%s: %s has mode %o, the payload says %o", name, f.Path, got, wantMode)
		}
		checkOwner(t, name, f.Path, fi, f.User.ID != nil || f.User.Name != nil, f.Group.ID != nil || f.Group.Name != nil)
	}
	for _, d := range s.Directories {
		expected[d.Path] = true
		fi, err := os.Lstat(filepath.Join(root, d.Path))
		if err != nil || !fi.IsDir() {
			t.Errorf("%s: Ignition made no directory %s: %v", name, d.Path, err)
			continue
		}
		if d.Mode != nil && unixMode(fi) != *d.Mode {
			t.Errorf("%s: directory %s has mode %o, the payload says %o", name, d.Path, unixMode(fi), *d.Mode)
		}
	}
	for _, l := range s.Links {
		expected[l.Path] = true
		got, err := os.Readlink(filepath.Join(root, l.Path))
		if l.Hard != nil && *l.Hard {
			a, errA := os.Stat(filepath.Join(root, l.Path))
			b, errB := os.Stat(filepath.Join(root, *l.Target))
			if errA != nil || errB != nil || !os.SameFile(a, b) {
				t.Errorf("%s: %s is not a hard link to %s", name, l.Path, *l.Target)
			}
		} else if err != nil || got != *l.Target {
			t.Errorf("%s: link %s -> %q (%v), the payload says -> %s", name, l.Path, got, err, *l.Target)
		}
	}
	preset, _ := os.ReadFile(filepath.Join(root, "etc/systemd/system-preset/20-ignition.preset"))
	presetLines := strings.Split(string(preset), "\n")
	for _, u := range cfg.Systemd.Units {
		path := "/etc/systemd/system/" + u.Name
		if u.Contents != nil {
			expected[path] = true
			if got, err := os.ReadFile(filepath.Join(root, path)); err != nil || string(got) != *u.Contents {
				t.Errorf("%s: unit %s is not as the payload has it (%v)", name, u.Name, err)
			}
		}
		for _, d := range u.Dropins {
			dp := path + ".d/" + d.Name
			expected[dp] = true
			if got, err := os.ReadFile(filepath.Join(root, dp)); d.Contents != nil && (err != nil || string(got) != *d.Contents) {
				t.Errorf("%s: drop-in %s is not as the payload has it (%v)", name, dp, err)
			}
		}
		switch {
		case u.Mask != nil && *u.Mask:
			if got, _ := os.Readlink(filepath.Join(root, path)); got != "/dev/null" {
				t.Errorf("%s: masked unit %s links to %q, want /dev/null", name, u.Name, got)
			}
		case u.Enabled != nil && *u.Enabled:
			if !slices.Contains(presetLines, "enable "+u.Name) {
				t.Errorf("%s: unit %s is enabled in the payload but Ignition's preset has no `enable %s`:\n%s", name, u.Name, u.Name, preset)
			}
			checkPresetEnables(t, name, root, u)
		case u.Enabled != nil:
			if !slices.Contains(presetLines, "disable "+u.Name) {
				t.Errorf("%s: unit %s is disabled in the payload but Ignition's preset has no `disable %s`", name, u.Name, u.Name)
			}
		}
	}
	checkUsers(t, name, root, cfg, expected)
	// Nothing else: Ignition's bookkeeping, the users' files and what
	// `systemctl preset` linked are accounted for above.
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(p, root)
		switch {
		case expected[rel], skeletonPasswd[strings.TrimPrefix(rel, "/")] != "" || strings.HasSuffix(rel, "-") && skeletonPasswd[strings.TrimSuffix(strings.TrimPrefix(rel, "/"), "-")] != "",
			rel == "/etc/.ignition-result.json", rel == "/etc/.pwd.lock", rel == "/etc/systemd/system-preset/20-ignition.preset",
			strings.HasPrefix(rel, "/etc/systemd/system/") && strings.Contains(rel, ".wants/"),
			strings.HasPrefix(rel, "/home/"):
			return nil
		}
		t.Errorf("%s: Ignition wrote %s, which the payload does not declare", name, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkPresetEnables applies Ignition's preset to an enabled unit, as systemd
// does on a first boot (the bootstrap removes /etc/machine-id for that), and
// checks that it is then wanted by each target its [Install] names.
func checkPresetEnables(t *testing.T, name, root string, u igntypes.Unit) {
	t.Helper()
	if u.Contents == nil {
		return
	}
	var wantedBy []string
	for _, line := range strings.Split(*u.Contents, "\n") {
		if v, ok := strings.CutPrefix(line, "WantedBy="); ok {
			wantedBy = append(wantedBy, strings.Fields(v)...)
		}
	}
	if len(wantedBy) == 0 {
		t.Errorf("%s: enabled unit %s has no WantedBy=: the preset enables nothing", name, u.Name)
		return
	}
	if out, err := exec.Command("systemctl", "--root="+root, "preset", u.Name).CombinedOutput(); err != nil {
		t.Errorf("%s: systemctl --root preset %s: %v\n%s", name, u.Name, err, out)
		return
	}
	for _, target := range wantedBy {
		link := filepath.Join(root, "etc/systemd/system", target+".wants", u.Name)
		if got, err := os.Readlink(link); err != nil || got != "/etc/systemd/system/"+u.Name {
			t.Errorf("%s: after the preset, %s.wants/%s -> %q (%v), want the unit", name, target, u.Name, got, err)
		}
	}
}

// checkStartsAtBoot checks that the preset Ignition wrote, once applied,
// has multi-user.target start a unit at boot.
func checkStartsAtBoot(t *testing.T, root, unit string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(root, "etc/systemd/system/multi-user.target.wants", unit)); err != nil {
		t.Errorf("%s would not start at boot: %v", unit, err)
	}
}

// checkUsers checks the users and groups Ignition wrote into the root's
// /etc, and the SSH keys it wrote for them.
func checkUsers(t *testing.T, name, root string, cfg igntypes.Config, expected map[string]bool) {
	t.Helper()
	passwd, _ := os.ReadFile(filepath.Join(root, "etc/passwd"))
	group, _ := os.ReadFile(filepath.Join(root, "etc/group"))
	for _, g := range cfg.Passwd.Groups {
		if !hasEntry(string(group), g.Name) {
			t.Errorf("%s: /etc/group has no group %s:\n%s", name, g.Name, group)
		}
	}
	for _, u := range cfg.Passwd.Users {
		entry := passwdEntry(string(passwd), u.Name)
		if entry == nil {
			t.Errorf("%s: /etc/passwd has no user %s:\n%s", name, u.Name, passwd)
			continue
		}
		home := entry[5]
		if len(u.SSHAuthorizedKeys) == 0 {
			continue
		}
		// Ignition writes a user's keys as a fragment of authorized_keys.d,
		// which Flatcar's sshd reads.
		keyFile := filepath.Join(home, ".ssh/authorized_keys.d/ignition")
		got, err := os.ReadFile(filepath.Join(root, keyFile))
		if err != nil {
			t.Errorf("%s: no SSH keys of %s: %v", name, u.Name, err)
			continue
		}
		var want []string
		for _, k := range u.SSHAuthorizedKeys {
			want = append(want, string(k))
		}
		if lines := strings.Split(strings.TrimSpace(string(got)), "\n"); !slices.Equal(lines, want) {
			t.Errorf("%s: %s holds %d keys, the payload has %d", name, keyFile, len(lines), len(want))
		}
		fi, err := os.Stat(filepath.Join(root, keyFile))
		if err == nil && unixMode(fi)&0o077 != 0 {
			t.Errorf("%s: %s has mode %o, want none for group and others", name, keyFile, unixMode(fi))
		}
		if err == nil && fmt.Sprint(fi.Sys().(*syscall.Stat_t).Uid) != entry[2] {
			t.Errorf("%s: %s is not owned by %s (uid %s)", name, keyFile, u.Name, entry[2])
		}
	}
}

// passwdEntry returns the fields of a user's /etc/passwd line, or nil.
func passwdEntry(passwd, name string) []string {
	for _, line := range strings.Split(passwd, "\n") {
		if f := strings.Split(line, ":"); len(f) == 7 && f[0] == name {
			return f
		}
	}
	return nil
}

func hasEntry(file, name string) bool {
	for _, line := range strings.Split(file, "\n") {
		if strings.HasPrefix(line, name+":") {
			return true
		}
	}
	return false
}

// unixMode is the permission and special bits of a file, as Ignition's mode.
func unixMode(fi fs.FileInfo) int {
	m := int(fi.Mode().Perm())
	if fi.Mode()&fs.ModeSetuid != 0 {
		m |= 0o4000
	}
	if fi.Mode()&fs.ModeSetgid != 0 {
		m |= 0o2000
	}
	if fi.Mode()&fs.ModeSticky != 0 {
		m |= 0o1000
	}
	return m
}

// checkOwner checks a file's owner: root unless the payload names a user or
// group (none of osm's files does).
func checkOwner(t *testing.T, name, path string, fi fs.FileInfo, hasUser, hasGroup bool) {
	t.Helper()
	st := fi.Sys().(*syscall.Stat_t)
	if !hasUser && st.Uid != 0 || !hasGroup && st.Gid != 0 {
		t.Errorf("%s: %s is owned by %d:%d, want root", name, path, st.Uid, st.Gid)
	}
}

// runInSandbox runs a script Ignition wrote into root in the sandbox, with
// root's files copied over the host's (in the overlay) and env appended to
// /etc/environment. systemctl, sysctl, swapoff and update-ca-certificates
// are stubs: they would act on the host.
func runInSandbox(t *testing.T, root, env, script string) sandboxRun {
	t.Helper()
	s := newSandbox(t)
	if err := copyTree(root, filepath.Join(s.dir, "root")); err != nil {
		t.Fatal(err)
	}
	// The root's /etc/passwd and group are Ignition's work, checked above; the
	// sandbox keeps the host's, which its tools need.
	s.prepare = `cd /osm-test/root && tar --exclude=./etc/passwd --exclude=./etc/group --exclude=./etc/shadow --exclude=./etc/gshadow -cf - . | tar -C / -xpf - && cd /
# Flatcar's image has the OEM directory, where the bootstrap stages config.ign.
mkdir -p /usr/share/oem`
	if env != "" {
		s.prepare += "\nprintf '%s' \"$OSM_TEST_ENV\" >>/etc/environment"
		s.env = append(s.env, "OSM_TEST_ENV="+env)
	}
	for _, name := range []string{"systemctl", "sysctl", "swapoff", "update-ca-certificates"} {
		s.stub(name, "exit 0")
	}
	// Ignition wrote the script with its mode: it must be executable as it is.
	return s.run(t, "exec "+script+"\n")
}

// copyTree copies the tree at src over dst, keeping modes and owners,
// leaving out the absolute paths in skip.
func copyTree(src, dst string, skip ...string) error {
	args := []string{"-C", src, "-cf", "-"}
	for _, s := range skip {
		args = append(args, "--exclude=."+s)
	}
	pack := exec.Command("tar", append(args, ".")...)
	unpack := exec.Command("tar", "-C", dst, "-xpf", "-")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	r, w := io.Pipe()
	pack.Stdout, unpack.Stdin = w, r
	var errs bytes.Buffer
	pack.Stderr, unpack.Stderr = &errs, &errs
	if err := unpack.Start(); err != nil {
		return err
	}
	packErr := pack.Run()
	_ = w.Close()
	if err := errors.Join(packErr, unpack.Wait()); err != nil {
		return fmt.Errorf("copying %s to %s: %w: %s", src, dst, err, errs.String())
	}
	return nil
}

// nodeServer plays osm-apiserver (MachineJoin, BootReport steps, over TLS
// verified against the cluster CA of the render) and the download sites
// (fake release files with their checksums) for one node at a time.
type nodeServer struct {
	*httptest.Server
	downloads    *httptest.Server // the download sites, over plain HTTP as a mirror may be
	mu           sync.Mutex
	provisioning []byte
	joins        []string // bodies of the MachineJoins posted
	steps        []bootStepSpec
	badAuth      []string
}

type bootStepSpec struct {
	Step     string `json:"step"`
	Phase    string `json:"phase"`
	ExitCode *int   `json:"exitCode"`
	Final    bool   `json:"final"`
}

func newNodeServer(t *testing.T) *nodeServer {
	t.Helper()
	s := &nodeServer{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	s.downloads = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	t.Cleanup(s.downloads.Close)
	return s
}

// edit points a render at the server: its URL and its certificate as the
// cluster CA, and no proxy for it.
func (s *nodeServer) edit(in *render.Input) {
	in.Cluster.ServerURL = s.URL
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}))
	in.Cluster.CACert, in.Cluster.HostCACert = ca, ca
	in.Node.NoProxy += ",127.0.0.1"
}

func (s *nodeServer) reset(provisioning []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.provisioning, s.joins, s.steps, s.badAuth = provisioning, nil, nil, nil
}

const osmAPI = "/apis/osm.k8c.io/v1alpha1/namespaces/kube-system/"

func (s *nodeServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	if strings.HasPrefix(r.URL.Path, "/apis/") && r.Header.Get("Authorization") != "Bearer "+fetchToken {
		s.badAuth = append(s.badAuth, r.Method+" "+r.URL.Path)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == osmAPI+"machinejoins":
		s.joins = append(s.joins, string(body))
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"kind":"MachineJoin","apiVersion":"osm.k8c.io/v1alpha1","metadata":{"name":%q},`+
			`"status":{"kubeconfig":%q,"provisioning":%q,"provisioningFormat":"ignition",`+
			`"profile":{"namespace":"kube-system","name":"osp-flatcar","version":"v0.8.0"},"machineDeploymentRevision":"1"}}`,
			testMachine, base64.StdEncoding.EncodeToString([]byte(testKubeconfig)), base64.StdEncoding.EncodeToString(s.provisioning))
	case r.Method == http.MethodPost && r.URL.Path == osmAPI+"bootreports/"+testMachine+"/step":
		var step struct {
			Spec bootStepSpec `json:"spec"`
		}
		if err := json.Unmarshal(body, &step); err != nil {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		s.steps = append(s.steps, step.Spec)
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/apis/"):
		file, sum := strings.CutSuffix(r.URL.Path, ".sha256")
		content, ok := fakeRelease(file)
		if !ok {
			http.NotFound(w, r)
			return
		}
		if sum {
			fmt.Fprintf(w, "%x  %s\n", sha256Sum(content), filepath.Base(file))
			return
		}
		_, _ = w.Write(content)
	default:
		http.NotFound(w, r)
	}
}

// checkJoin checks the one MachineJoin the bootstrap posted.
func (s *nodeServer) checkJoin(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.badAuth) > 0 {
		t.Errorf("requests without the fetch token: %q", s.badAuth)
	}
	if len(s.joins) != 1 || !strings.Contains(s.joins[0], `"machineName":"`+testMachine+`"`) {
		t.Errorf("MachineJoins %q, want one for %s", s.joins, testMachine)
	}
}

// checkSetup checks what osm-setup did with the fake downloads, and what
// osm-report reported of it.
func checkSetup(t *testing.T, setup sandboxRun, s *nodeServer) {
	t.Helper()
	for path, want := range map[string]string{
		"/opt/bin/kubelet":     "#!/bin/sh\necho fake kubelet\n",
		"/opt/bin/kubectl":     "#!/bin/sh\necho fake kubectl\n",
		"/opt/bin/crictl":      "#!/bin/sh\necho fake crictl\n",
		"/opt/cni/bin/flannel": "#!/bin/sh\necho fake flannel\n",
	} {
		if got, ok := setup.changed(path); !ok || got != want {
			t.Errorf("osm-setup did not install %s from the fake release (written: %v)", path, ok)
		}
		if mode, _ := setup.mode(path); mode&0o111 == 0 {
			t.Errorf("%s has mode %o, want it executable", path, mode)
		}
	}
	if _, ok := setup.changed("/var/lib/osm/setup.done"); !ok {
		t.Error("osm-setup did not finish (no /var/lib/osm/setup.done)")
	}
	for _, want := range []string{"systemctl restart containerd", "systemctl enable kubelet", "systemctl start kubelet"} {
		if len(setup.called(want)) == 0 {
			t.Errorf("osm-setup did not run %q; calls:\n%s", want, strings.Join(setup.calls, "\n"))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.badAuth) > 0 {
		t.Errorf("requests without the fetch token: %q", s.badAuth)
	}
	var succeeded []string
	for _, st := range s.steps {
		if st.Phase == "Succeeded" {
			succeeded = append(succeeded, st.Step)
		}
	}
	if !slices.Equal(succeeded, reportedSteps) {
		t.Errorf("osm-report reported %q succeeded, want %q (all steps: %+v)", succeeded, reportedSteps, s.steps)
	}
	if n := len(s.steps); n == 0 || !s.steps[n-1].Final {
		t.Errorf("the last step reported is not final: %+v", s.steps)
	}
}

// fakeRelease is what the fake download sites serve at a path: scripts for
// the kubelet and kubectl, gzipped tarballs of one script for the CNI
// plugins and crictl.
func fakeRelease(path string) ([]byte, bool) {
	base := filepath.Base(path)
	script := func(name string) []byte { return []byte("#!/bin/sh\necho fake " + name + "\n") }
	switch {
	case strings.HasPrefix(path, "/kube/") && (base == "kubelet" || base == "kubectl"):
		return script(base), true
	case strings.HasPrefix(path, "/cni/") && strings.HasPrefix(base, "cni-plugins-linux-") && strings.HasSuffix(base, ".tgz"):
		return tarGz("flannel", script("flannel")), true
	case strings.HasPrefix(path, "/crictl/") && strings.HasPrefix(base, "crictl-") && strings.HasSuffix(base, ".tar.gz"):
		return tarGz("crictl", script("crictl")), true
	}
	return nil, false
}

// tarGz is a gzipped tarball of one executable file, the same bytes every
// time (its checksum is served apart from it).
func tarGz(name string, content []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	_ = tw.WriteHeader(&tar.Header{Name: "./" + name, Mode: 0o755, Size: int64(len(content)), Typeflag: tar.TypeReg})
	_, _ = tw.Write(content)
	_ = tw.Close()
	_ = zw.Close()
	return b.Bytes()
}

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }
