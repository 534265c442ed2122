package app

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
)

// runExit runs the command line as main does and returns stdout, stderr and
// the exit code (component-base's cli.Run returns 1 for an error).
func runExit(args ...string) (stdout, stderr string, code int) {
	root := NewRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	code = 0
	if err := root.Execute(); err != nil {
		code = 1
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), ExitCode(root, code)
}

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const caOverlay = `apiVersion: overlays.osm.k8c.io/v1alpha1
kind: OperatingSystemProfileOverlay
metadata: {name: company-ca, namespace: kube-system}
spec:
  profiles: [osp-ubuntu]
  provisioningConfig:
    files:
      - path: /usr/local/share/ca-certificates/company-ca.crt
        content: {inline: {data: "CA of {{ .CloudProviderName }}\n"}}
`

// TestRenderDiff: --diff exits 0 for the same payloads, 1 when they differ
// (an overlay, another OSP), 2 when a render fails; an overlay that does
// not apply is noted, not applied.
func TestRenderDiff(t *testing.T) {
	dir := caseDir(t, "ubuntu-openstack-containerd")
	args := append([]string{"render"}, caseArgs(t, dir)...)
	osp, err := os.ReadFile(filepath.Join(dir, "osp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	newer := writeFile(t, "osp.yaml", strings.Replace(string(osp), "net.ipv4.ip_forward = 1", "net.ipv4.ip_forward = 1\n              vm.max_map_count = 262144", 1))
	broken := writeFile(t, "broken.yaml", strings.Replace(string(osp), "{{ .KubeVersion }}", "{{ .Nope }}", 1))
	ca := writeFile(t, "ca.yaml", caOverlay)
	elsewhere := writeFile(t, "elsewhere.yaml", strings.Replace(caOverlay, "namespace: kube-system", "namespace: team-a", 1))

	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		out, notes string
	}{
		{"same", []string{"--diff"}, exitSame, "machinedeployment kube-system/ubuntu-openstack: payloads unchanged\n", ""},
		{"overlay", []string{"--diff", "--overlay", ca}, exitDiffer, "provisioning file /usr/local/share/ca-certificates/company-ca.crt: added\n", ""},
		{"overlay of another namespace", []string{"--diff", "--overlay", elsewhere}, exitSame, "payloads unchanged",
			"overlay team-a/company-ca does not apply to machinedeployment kube-system/ubuntu-openstack: not applied"},
		{"two profiles", []string{"--diff", "--base-osp", filepath.Join(dir, "osp.yaml"), "--osp", newer}, exitDiffer, "+vm.max_map_count = 262144\n", ""},
		{"the same overlay on both", []string{"--diff", "--base-overlay", ca, "--overlay", ca}, exitSame, "payloads unchanged", ""},
		{"a broken candidate", []string{"--diff", "--osp", broken}, exitError, "render fails, payloads unchanged: osp-ubuntu: ", "at <.Nope>"},
		{"bad output", []string{"--diff", "--output", "json"}, exitError, "", `--output: "json" is not text or yaml (with --diff)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, notes, code := runExit(append(slices.Clone(args), tc.args...)...)
			if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(notes, tc.notes) {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, notes)
			}
		})
	}

	out, _, code := runExit(append(slices.Clone(args), "--diff", "--overlay", ca, "--output", "yaml")...)
	var pr osmv1alpha1.ProfileReview
	if err := yaml.UnmarshalStrict([]byte(out), &pr); err != nil || code != exitDiffer {
		t.Fatalf("--output yaml (exit %d): %v\n%s", code, err, out)
	}
	if pr.Kind != "ProfileReview" || pr.Status.Changed != 1 || pr.Status.MachineDeployments[0].Files[0].Diff == "" {
		t.Errorf("review %+v", pr.Status)
	}
	// The diff is of the view: the tokens of the command line are not in it.
	if strings.Contains(out, "top-secret") {
		t.Error("the review shows the cloud-init getter token")
	}
}

// TestRenderWithOverlay: a plain render applies the overlays that apply.
func TestRenderWithOverlay(t *testing.T) {
	dir := caseDir(t, "ubuntu-openstack-containerd")
	out, err := runRender(append(caseArgs(t, dir), "--overlay", writeFile(t, "ca.yaml", caOverlay))...)
	if err != nil {
		t.Fatal(err)
	}
	var osc osmv1alpha1.OperatingSystemConfig
	if err := yaml.UnmarshalStrict([]byte(out), &osc); err != nil {
		t.Fatal(err)
	}
	if len(osc.Status.Overlays) != 1 || !strings.Contains(out, "CA of openstack") {
		t.Errorf("status.overlays %+v", osc.Status.Overlays)
	}
}
