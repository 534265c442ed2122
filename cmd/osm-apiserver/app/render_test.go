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

// caseDir is one upstream case in ../shared beside the repository root.
func caseDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "..", "shared", "upstream-osm", "cases", name)
	if _, err := os.Stat(filepath.Join(dir, "args")); err != nil {
		t.Skipf("../shared/upstream-osm is missing beside the repository root: %v", err)
	}
	return dir
}

// caseArgs are the case's render arguments, with paths made relative to here.
func caseArgs(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "args"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, a := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if _, err := os.Stat(filepath.Join(dir, a)); err == nil && !strings.HasPrefix(a, "-") {
			a = filepath.Join(dir, a)
		}
		args = append(args, a)
	}
	return args
}

func runRender(args ...string) (stdout string, err error) {
	cmd := NewRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append([]string{"render"}, args...))
	err = cmd.Execute()
	return out.String(), err
}

func TestRenderCase(t *testing.T) {
	dir := caseDir(t, "ubuntu-openstack-containerd")
	args := caseArgs(t, dir)

	out, err := runRender(append(args, "--output", "bootstrap")...)
	if err != nil {
		t.Fatalf("render --output bootstrap: %v", err)
	}
	if !strings.HasPrefix(out, "#cloud-config\n") || !strings.Contains(out, "<MACHINE_NAME>") {
		t.Errorf("bootstrap user-data is not an OpenStack #cloud-config with a hostname:\n%.300s", out)
	}

	out, err = runRender(args...)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	var osc osmv1alpha1.OperatingSystemConfig
	if err := yaml.UnmarshalStrict([]byte(out), &osc); err != nil {
		t.Fatalf("--output osc is not an OperatingSystemConfig: %v", err)
	}
	if osc.APIVersion != "osm.k8c.io/v1alpha1" || osc.Kind != "OperatingSystemConfig" {
		t.Errorf("apiVersion/kind = %s/%s", osc.APIVersion, osc.Kind)
	}
	if osc.Name != "ubuntu-openstack" || osc.Status.Profile.Name != "osp-ubuntu" || osc.Spec.OSName != "ubuntu" {
		t.Errorf("unexpected OSC: name %q, profile %q, osName %q", osc.Name, osc.Status.Profile.Name, osc.Spec.OSName)
	}
	if osc.Status.BootstrapPayloadSize == 0 || len(osc.Spec.ProvisioningConfig.Files) == 0 {
		t.Errorf("OSC without payload sizes or provisioning files: %+v", osc.Status)
	}
	// Like the server's, the OSC is rendered from placeholders for the tokens.
	for i, a := range args {
		if (a == "--cloud-init-getter-token" || a == "--bootstrap-token") && i+1 < len(args) && strings.Contains(out, args[i+1]) {
			t.Errorf("--output osc shows %s", a)
		}
	}
}

func TestRenderBadInput(t *testing.T) {
	dir := caseDir(t, "ubuntu-openstack-containerd")
	args := caseArgs(t, dir)
	badOSP := filepath.Join(t.TempDir(), "osp.yaml")
	osp, err := os.ReadFile(filepath.Join(dir, "osp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(badOSP, bytes.Replace(osp, []byte("  osVersion:"), []byte("  osVersio: x\n  osVersion:"), 1), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
		{"missing osp", nil, "--osp is required"},
		{"bad output", append(slices.Clone(args), "--output", "json"), `--output: "json" is not osc, bootstrap or provisioning`},
		{"bad feature gate", append(slices.Clone(args), "--node-kubelet-feature-gates", "Foo=maybe"), `--node-kubelet-feature-gates: "Foo": value "maybe" is not true or false`},
		{"unknown OSP field", append(slices.Clone(args), "--osp", badOSP), `unknown field "osVersio"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runRender(tc.args...)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q: want one line containing %q", msg, tc.want)
			}
		})
	}
}
