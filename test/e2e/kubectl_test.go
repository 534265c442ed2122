package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
)

func TestKubectlGetOSCTable(t *testing.T) {
	out := kubectl(t, "get", "osc", "-A")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	header := strings.Fields(lines[0])
	// Column names as the issue asks for them; each must appear in some header cell.
	for _, want := range []string{"NAMESPACE", "NAME", "OS", "CLOUD", "PROFILE", "BOOTSTRAP", "PROVISIONING"} {
		if !slices.ContainsFunc(header, func(h string) bool { return strings.Contains(h, want) }) {
			t.Errorf("kubectl get osc -A: no column %s in header %v", want, header)
		}
	}
	row := rowOf(lines, "e2e-ubuntu-aws")
	if row == "" {
		t.Fatalf("kubectl get osc -A: no row for e2e-ubuntu-aws:\n%s", out)
	}
	for _, want := range []string{"e2e", "ubuntu", "24.04", "aws", "e2e-ubuntu@v1.0.0", "cloud-init"} {
		if !slices.Contains(strings.Fields(row), want) {
			t.Errorf("row %q lacks %q", row, want)
		}
	}
	// An MD that names no profile renders from its operating system's default.
	if row := rowOf(lines, "e2e-no-profile"); !strings.Contains(row, "osp-ubuntu@") || !strings.Contains(row, "(default)") {
		t.Errorf("the MD that names no profile: row %q, want osp-ubuntu (default)", row)
	}
}

func TestKubectlGetPayloadTable(t *testing.T) {
	out := kubectl(t, "get", "provisioningpayloads", "-n", testNamespace)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, name := range []string{"e2e-ubuntu-aws-bootstrap", "e2e-ubuntu-aws-provisioning", "e2e-ubuntu-openstack-bootstrap"} {
		if rowOf(lines, name) == "" {
			t.Errorf("kubectl get provisioningpayloads: no row %s:\n%s", name, out)
		}
	}
	header := strings.Join(strings.Fields(lines[0]), " ")
	for _, want := range []string{"SIZE", "LIMIT"} {
		if !strings.Contains(header, want) {
			t.Errorf("kubectl get provisioningpayloads: no column %s in %q", want, header)
		}
	}
}

func TestKubectlGetOSCYAMLShowsRenderedSpec(t *testing.T) {
	var osc osmv1alpha1.OperatingSystemConfig
	if err := yaml.Unmarshal([]byte(kubectl(t, "get", "osc", "-n", testNamespace, "e2e-ubuntu-aws", "-o", "yaml")), &osc); err != nil {
		t.Fatal(err)
	}
	if osc.Spec.OSName != "ubuntu" || osc.Spec.CloudProvider.Name != "aws" || osc.Spec.ProvisioningUtility != "cloud-init" {
		t.Errorf("spec: osName=%q cloud=%q utility=%q, want ubuntu aws cloud-init",
			osc.Spec.OSName, osc.Spec.CloudProvider.Name, osc.Spec.ProvisioningUtility)
	}
	if got := fileData(t, osc.Spec.ProvisioningConfig.Files, "/etc/e2e/node-info"); got != "kubelet v1.33.4 on aws\n" {
		t.Errorf("/etc/e2e/node-info = %q, want the MD's kubelet version and cloud", got)
	}
	if !slices.ContainsFunc(osc.Spec.ProvisioningConfig.Units, func(u osmv1alpha1.Unit) bool { return u.Name == "e2e-node-info.service" }) {
		t.Errorf("provisioning units %v lack e2e-node-info.service", osc.Spec.ProvisioningConfig.Units)
	}
	want := osmv1alpha1.ProfileReference{Namespace: "kube-system", Name: "e2e-ubuntu", Version: "v1.0.0"}
	if osc.Status.Profile != want {
		t.Errorf("status.profile = %+v, want %+v", osc.Status.Profile, want)
	}
	if osc.Status.RenderError != "" || osc.Status.BootstrapPayloadSize == 0 || osc.Status.ProvisioningPayloadSize == 0 {
		t.Errorf("status: error=%q sizes=%d/%d, want no error and non-zero sizes", osc.Status.RenderError,
			osc.Status.BootstrapPayloadSize, osc.Status.ProvisioningPayloadSize)
	}
}

func TestKubectlExplain(t *testing.T) {
	cases := []struct {
		field string
		want  []string
	}{
		{"osc.spec", []string{"osName", "osVersion", "cloudProvider", "bootstrapConfig", "provisioningConfig"}},
		{"provisioningpayloads.spec.userData", []string{"user-data"}},
		{"bootreports.status.steps", []string{"logTail", "exitCode", "duration"}},
		{"osc.status.machines", []string{"current", "older", "failed", "provisioning"}},
	}
	for _, c := range cases {
		// kube-apiserver aggregates OpenAPI asynchronously; the harness waited for the
		// group to appear, this allows for its documents to settle.
		eventually(t, 30*time.Second, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := kubectlCtx(ctx, "explain", c.field)
			if err != nil {
				return err
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					return fmt.Errorf("kubectl explain %s lacks %q:\n%s", c.field, w, out)
				}
			}
			return nil
		})
	}
}

func TestGetRawPayloadReturnsUserData(t *testing.T) {
	for _, typ := range []string{"bootstrap", "provisioning"} {
		t.Run(typ, func(t *testing.T) {
			p := rawPayload(t, testNamespace, "e2e-ubuntu-aws-"+typ)
			if !strings.HasPrefix(p.Spec.UserData, "#cloud-config\n") {
				t.Errorf("user-data does not start with #cloud-config: %.80q", p.Spec.UserData)
			}
			sum := sha256.Sum256([]byte(p.Spec.UserData))
			if p.Spec.Size != int64(len(p.Spec.UserData)) || p.Spec.SHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("size %d sha256 %s do not describe the %d bytes of user-data", p.Spec.Size, p.Spec.SHA256, len(p.Spec.UserData))
			}
			if string(p.Spec.Type) != typ || p.Spec.Format != osmv1alpha1.PayloadFormatCloudInit ||
				p.Spec.MachineDeployment != "e2e-ubuntu-aws" || p.Spec.CloudProvider != "aws" {
				t.Errorf("spec = type %q format %q md %q cloud %q", p.Spec.Type, p.Spec.Format, p.Spec.MachineDeployment, p.Spec.CloudProvider)
			}
			// Only the bootstrap payload is passed as user-data; the provisioning one is
			// fetched from its Secret.
			if typ == "bootstrap" && p.Spec.UserDataLimit != 16*1024 {
				t.Errorf("userDataLimit = %d, want AWS's 16 KiB", p.Spec.UserDataLimit)
			}
			var cfg map[string]any
			if err := yaml.Unmarshal([]byte(p.Spec.UserData), &cfg); err != nil {
				t.Errorf("user-data is not YAML: %v", err)
			}
		})
	}
	prov := rawPayload(t, testNamespace, "e2e-ubuntu-aws-provisioning")
	if got := cloudConfigFile(t, prov.Spec.UserData, "/etc/e2e/node-info"); got != "kubelet v1.33.4 on aws\n" {
		t.Errorf("provisioning user-data: /etc/e2e/node-info = %q", got)
	}
}

func rawPayload(t *testing.T, ns, name string) osmv1alpha1.ProvisioningPayload {
	t.Helper()
	out := kubectl(t, "get", "--raw", "/apis/osm.k8c.io/v1alpha1/namespaces/"+ns+"/provisioningpayloads/"+name)
	var p osmv1alpha1.ProvisioningPayload
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if p.Name != name || p.Namespace != ns || p.Kind != "ProvisioningPayload" {
		t.Fatalf("got %s %s/%s, want ProvisioningPayload %s/%s", p.Kind, p.Namespace, p.Name, ns, name)
	}
	return p
}

// rowOf returns the table row whose NAME cell is name.
func rowOf(lines []string, name string) string {
	for _, l := range lines[1:] {
		if slices.Contains(strings.Fields(l), name) {
			return l
		}
	}
	return ""
}
