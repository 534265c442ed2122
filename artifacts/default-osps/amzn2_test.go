package defaultosps

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAmazonLinux2StaticContainerd: Amazon Linux 2 has glibc 2.26 and the
// default containerd 2.x tarball needs 2.35, so osp-amzn2 must download the
// static one and check it against the release's .sha256sum, which names the file.
func TestAmazonLinux2StaticContainerd(t *testing.T) {
	requireTools(t, "bash", "curl", "sha256sum", "awk")
	setup := renderOSP(t, "osp-amzn2", "aws", "", nil).provisioning["/opt/bin/osm-setup"]

	var prog strings.Builder
	prog.WriteString("set -euo pipefail\n")
	for _, line := range strings.Split(setup, "\n") {
		if defaultPattern.MatchString(line) {
			prog.WriteString(line + "\n")
		}
	}
	prog.WriteString("for arch in amd64 arm64; do\n")
	for _, line := range strings.Split(setup, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "ctd_tgz=") {
			prog.WriteString(line + "\n")
		}
	}
	prog.WriteString(`echo "$containerd_url/$containerd_version/$ctd_tgz"` + "\ndone\n")
	cmd := exec.Command("bash", "-c", prog.String())
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")} // no OSM_* overrides
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("containerd URL: %v: %s", err, out)
	}
	urlRE := regexp.MustCompile(`^https://github\.com/containerd/containerd/releases/download/v([0-9.]+)/containerd-static-([0-9.]+)-linux-(amd64|arm64)\.tar\.gz$`)
	for _, u := range strings.Fields(string(out)) {
		m := urlRE.FindStringSubmatch(u)
		if m == nil || m[1] != m[2] {
			t.Errorf("osp-amzn2 downloads containerd from %s, want the release's containerd-static-<version>-linux-<arch>.tar.gz", u)
		}
	}
	if !strings.Contains(setup, `verify_named "$tmp/$ctd_tgz" "$containerd_url/$containerd_version/$ctd_tgz.sha256sum"`) {
		t.Error("osp-amzn2 does not check the containerd tarball against the checksum the release names it with")
	}

	verifyNamed := shellFunction(t, setup, "verify_named")
	dir := t.TempDir()
	const tgz = "containerd-static-2.1.4-linux-amd64.tar.gz"
	if err := os.WriteFile(filepath.Join(dir, tgz), []byte("tarball"), 0o644); err != nil {
		t.Fatal(err)
	}
	const sum = "2f7fd0cbe8ecdd1b2d4a6ca37d11d29b1a33aba2b3a6a14fe8ab1a4d9b5ae4f7" // not the file's
	good, err := exec.Command("sha256sum", filepath.Join(dir, tgz)).Output()
	if err != nil {
		t.Fatal(err)
	}
	goodSum := strings.Fields(string(good))[0]
	for name, tc := range map[string]struct {
		sums    string
		wantErr string
	}{
		"sums file as the release writes it": {goodSum + "  " + tgz + "\n", ""},
		"binary-mode line":                   {goodSum + " *" + tgz + "\n", ""},
		"among other files":                  {sum + "  containerd-2.1.4-linux-amd64.tar.gz\n" + goodSum + "  " + tgz + "\n", ""},
		"only the dynamic tarball's sum":     {goodSum + "  containerd-2.1.4-linux-amd64.tar.gz\n", "has no checksum of " + tgz},
		"wrong checksum":                     {sum + "  " + tgz + "\n", "FAILED"},
		"empty sums file":                    {"", "has no checksum of " + tgz},
	} {
		t.Run(name, func(t *testing.T) {
			sums := filepath.Join(t.TempDir(), tgz+".sha256sum")
			if err := os.WriteFile(sums, []byte(tc.sums), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("bash", "-c", "set -euo pipefail\n"+verifyNamed+"\nverify_named \"$1\" \"file://$2\"",
				"verify", filepath.Join(dir, tgz), sums).CombinedOutput()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("verify_named rejected a matching checksum: %v: %s", err, out)
			case tc.wantErr != "" && err == nil:
				t.Errorf("verify_named accepted it: %s", out)
			case tc.wantErr != "" && !strings.Contains(string(out), tc.wantErr):
				t.Errorf("verify_named output %q, want it to contain %q", out, tc.wantErr)
			}
		})
	}
}
