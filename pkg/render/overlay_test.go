package render

import (
	"errors"
	"strings"
	"testing"

	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
)

// overlay decodes an overlay named namespace/name from the YAML of its spec.
func overlay(t *testing.T, namespace, name, spec string) *overlaysv1alpha1.OperatingSystemProfileOverlay {
	t.Helper()
	o, err := DecodeOverlay([]byte("apiVersion: overlays.osm.k8c.io/v1alpha1\nkind: OperatingSystemProfileOverlay\n" +
		"metadata: {namespace: " + namespace + ", name: " + name + "}\nspec:\n" + spec))
	if err != nil {
		t.Fatalf("overlay %s/%s: %v", namespace, name, err)
	}
	return o
}

// caOverlay adds a CA, replaces the profile's kubelet file, adds a unit (as a
// file: the golden OSP is Ubuntu's), drops into osm-setup.service and
// appends commands; its templates read the render's data.
const caOverlay = `  profiles: [osp-golden]
  provisioningConfig:
    templates:
      site: 'site={{ .CloudProviderName }}'
    files:
      - path: /usr/local/share/ca-certificates/company-ca.crt
        content:
          inline:
            data: |
              -----BEGIN CERTIFICATE-----
              {{ template "site" }} kubelet {{ .KubeVersion }}
              -----END CERTIFICATE-----
      - path: /etc/golden/kubelet
        permissions: 600
        content:
          inline:
            data: "replaced for {{ .KubeVersion }}\n"
    units:
      - name: company-agent.service
        enable: true
        content: |
          [Service]
          ExecStart=/opt/bin/company-agent {{ not a template }}
    dropIns:
      - unit: osm-setup.service
        name: 10-company-ca.conf
        content: |
          [Service]
          ExecStartPre=/usr/sbin/update-ca-certificates
    modules:
      runcmd:
        - echo company
`

const ntpOverlay = `  profiles: [osp-golden]
  provisioningConfig:
    files:
      - path: /etc/systemd/timesyncd.conf.d/90-company.conf
        content:
          inline:
            data: "[Time]\nNTP=ntp1.example.com\n"
    modules:
      runcmd:
        - systemctl try-restart systemd-timesyncd
`

func TestOverlayGolden(t *testing.T) {
	in := goldenInput(t)
	in.Overlays = []*overlaysv1alpha1.OperatingSystemProfileOverlay{
		overlay(t, "kube-system", "10-ca", caOverlay),
		overlay(t, "kube-system", "20-ntp", ntpOverlay),
	}
	res, err := NewRenderer().Render(in)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "overlay-ubuntu-provisioning", string(res.Provisioning.UserData))
	base := goldenInput(t)
	plain, err := NewRenderer().Render(base)
	if err != nil {
		t.Fatal(err)
	}
	if string(plain.Bootstrap.UserData) != string(res.Bootstrap.UserData) {
		t.Error("an overlay of the provisioning config changed the bootstrap payload")
	}
}

func TestOverlayFlatcarUnits(t *testing.T) {
	in := goldenInput(t)
	in.OSP.Spec.OSName = ospv1alpha1.OperatingSystemFlatcar
	in.OSP.Spec.ProvisioningConfig.Units = []ospv1alpha1.Unit{
		{Name: "osm-setup.service", Content: ptr("[Service]\nExecStart=/opt/bin/osm-setup\n"), DropIns: []ospv1alpha1.DropIn{{Name: "10-ca.conf", Content: "old"}}},
		{Name: "kubelet.service", Content: ptr("[Service]\nExecStart=/opt/bin/kubelet\n")},
	}
	in.MachineDeployment = testMachineDeployment(map[string]string{machinecontroller.AnnotationOSP: "osp-golden"},
		strings.Replace(strings.Replace(awsUbuntu, `"ubuntu"`, `"flatcar"`, 1), `{"distUpgradeOnBoot":true}`, `{"provisioningUtility":"cloud-init"}`, 1))
	in.Overlays = []*overlaysv1alpha1.OperatingSystemProfileOverlay{overlay(t, "kube-system", "units", `  profiles: [osp-golden]
  provisioningConfig:
    units:
      - name: kubelet.service
        enable: true
        content: "[Service]\nExecStart=/opt/bin/kubelet --v=2\n"
    dropIns:
      - {unit: osm-setup.service, name: 10-ca.conf, content: new}
      - {unit: containerd.service, name: 10-mirror.conf, content: mirror}
`)}
	res, err := NewRenderer().Render(in)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "overlay-flatcar-units", string(res.Provisioning.UserData))
	units := res.Config.ProvisioningConfig.Units
	if len(units) != 3 || units[0].DropIns[0].Content != "new" || *units[1].Content != "[Service]\nExecStart=/opt/bin/kubelet --v=2\n" ||
		units[2].Name != "containerd.service" || units[2].DropIns[0].Name != "10-mirror.conf" {
		t.Errorf("units %+v", units)
	}
}

func TestOverlayConflicts(t *testing.T) {
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{"file", "  profiles: [x]\n  provisioningConfig:\n    files: [{path: /etc/x, content: {inline: {data: a}}}]\n",
			"  profiles: [x]\n  provisioningConfig:\n    files: [{path: /etc/x, content: {inline: {data: b}}}]\n",
			"overlay conflict: overlays kube-system/a and team/b both set file /etc/x in provisioningConfig"},
		{"unit as file", "  profiles: [x]\n  bootstrapConfig:\n    units: [{name: x.service, content: a}]\n",
			"  profiles: [x]\n  bootstrapConfig:\n    files: [{path: /etc/systemd/system/x.service, content: {inline: {data: b}}}]\n",
			"overlay conflict: overlays kube-system/a and team/b both set file /etc/systemd/system/x.service in bootstrapConfig"},
		{"unit", "  profiles: [x]\n  provisioningConfig:\n    units: [{name: x.service, enable: true}]\n",
			"  profiles: [x]\n  provisioningConfig:\n    units: [{name: x.service, mask: true}]\n",
			"overlay conflict: overlays kube-system/a and team/b both set unit x.service in provisioningConfig"},
		{"drop-in", "  profiles: [x]\n  provisioningConfig:\n    dropIns: [{unit: kubelet.service, name: 10-x.conf, content: a}]\n",
			"  profiles: [x]\n  provisioningConfig:\n    dropIns: [{unit: kubelet.service, name: 10-x.conf, content: b}]\n",
			"overlay conflict: overlays kube-system/a and team/b both set drop-in kubelet.service/10-x.conf in provisioningConfig"},
		{"template", "  profiles: [x]\n  bootstrapConfig:\n    templates: {proxy: a}\n",
			"  profiles: [x]\n  bootstrapConfig:\n    templates: {proxy: b}\n",
			"overlay conflict: overlays kube-system/a and team/b both set template proxy in bootstrapConfig"},
		{"yum repository", "  profiles: [x]\n  provisioningConfig:\n    modules: {yum_repos: {epel: {baseurl: a}}}\n",
			"  profiles: [x]\n  provisioningConfig:\n    modules: {yum_repos: {epel: {baseurl: b}}}\n",
			"overlay conflict: overlays kube-system/a and team/b both set yum repository epel in provisioningConfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := goldenInput(t)
			in.Overlays = []*overlaysv1alpha1.OperatingSystemProfileOverlay{overlay(t, "kube-system", "a", tc.a), overlay(t, "team", "b", tc.b)}
			_, err := NewRenderer().Render(in)
			var conflict *OverlayConflictError
			if !errors.As(err, &conflict) || err.Error() != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if conflict.Overlays != [2]string{"kube-system/a", "team/b"} {
				t.Errorf("overlays %v", conflict.Overlays)
			}
		})
	}
}

func TestOverlayErrors(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		modify     func(in *Input)
		want       string
	}{
		{"parse error", "  profiles: [x]\n  provisioningConfig:\n    files: [{path: /etc/x, content: {inline: {data: \"a\\n{{ foo }}\"}}}]\n", nil,
			`overlay team/o: provisioningConfig file /etc/x: template: line 2: function "foo" not defined`},
		{"execution error", "  profiles: [x]\n  bootstrapConfig:\n    files: [{path: /etc/x, content: {inline: {data: \"{{ fail \\\"no\\\" }}\"}}}]\n", nil,
			`overlay team/o: bootstrapConfig file /etc/x: template: line 1: at <fail "no">: error calling fail: no`},
		{"named template replaced", "  profiles: [x]\n  bootstrapConfig:\n    templates: {proxy: \"{{ .Nope }}\"}\n", nil,
			`overlay team/o: bootstrapConfig template proxy: template: line 1: at <.Nope>: can't evaluate field Nope in type *render.templateData`},
		{"modules with Ignition", "  profiles: [x]\n  provisioningConfig:\n    modules: {runcmd: [x]}\n", func(in *Input) {
			in.OSP.Spec.OSName, in.OSP.Spec.ProvisioningUtility = ospv1alpha1.OperatingSystemFlatcar, ospv1alpha1.ProvisioningUtilityIgnition
			in.MachineDeployment = testMachineDeployment(in.MachineDeployment.Annotations,
				strings.Replace(strings.Replace(awsUbuntu, `"ubuntu"`, `"flatcar"`, 1), `{"distUpgradeOnBoot":true}`, `{}`, 1))
		}, `overlay team/o: provisioningConfig: modules: Ignition payloads run no cloud-init modules; use units`},
		{"a file the server writes", "  profiles: [x]\n  provisioningConfig:\n    files: [{path: /etc/containerd/certs.d/docker.io/hosts.toml, content: {inline: {data: x}}}]\n", func(in *Input) {
			in.Node.RegistryMirrors = []string{"https://mirror.example.com"}
		}, `overlay team/o: provisioningConfig file /etc/containerd/certs.d/docker.io/hosts.toml: osm-apiserver writes it from its --node-* registry options`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := goldenInput(t)
			if tc.modify != nil {
				tc.modify(&in)
			}
			in.Overlays = []*overlaysv1alpha1.OperatingSystemProfileOverlay{overlay(t, "team", "o", tc.spec)}
			_, err := NewRenderer().Render(in)
			var oe *OverlayError
			if !errors.As(err, &oe) || oe.Overlay != "team/o" {
				t.Fatalf("got %v (%T), want an OverlayError of team/o", err, err)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %q\nwant %q", err, tc.want)
			}
		})
	}
}

// TestOverlayRevisions: a new generation of an overlay is parsed again, the
// same one is not; the profile alone stays cached beside it.
func TestOverlayRevisions(t *testing.T) {
	in := goldenInput(t)
	o := overlay(t, "kube-system", "ntp", ntpOverlay)
	o.UID, o.Generation = "uid-1", 1
	r := NewRenderer()
	first, err := r.compiled.get(in.OSP, []*overlaysv1alpha1.OperatingSystemProfileOverlay{o}, "containerd")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := r.compiled.get(in.OSP, []*overlaysv1alpha1.OperatingSystemProfileOverlay{o.DeepCopy()}, "containerd"); again != first {
		t.Error("the same overlay generation was parsed twice")
	}
	o2 := o.DeepCopy()
	o2.Generation = 2
	if next, _ := r.compiled.get(in.OSP, []*overlaysv1alpha1.OperatingSystemProfileOverlay{o2}, "containerd"); next == first {
		t.Error("a new overlay generation reused the old parse")
	}
	if plain, _ := r.compiled.get(in.OSP, nil, "containerd"); plain == first {
		t.Error("the profile without overlays reused the parse with them")
	}
}

func ptr[T any](v T) *T { return &v }

func TestCheckOverlay(t *testing.T) {
	ok := overlay(t, "team", "ok", "  profiles: [x]\n  provisioningConfig:\n    files: [{path: /etc/x, content: {inline: {data: \"{{ template \\\"profiles-own\\\" }} {{ .KubeVersion }}\"}}}]\n")
	if err := CheckOverlay(ok); err != nil {
		t.Errorf("an overlay calling a profile's template: %v", err)
	}
	bad := overlay(t, "team", "bad", "  profiles: [x]\n  bootstrapConfig:\n    templates: {t: \"{{ if }}\"}\n")
	if err := CheckOverlay(bad); err == nil || err.Error() != "overlay team/bad: bootstrapConfig template t: template: line 1: missing value for if" {
		t.Errorf("got %v", err)
	}
}

// TestOverlayReplacesDefaultHostsFile: docker.io's hosts.toml, which the
// server writes without any option, is an overlay's to replace.
func TestOverlayReplacesDefaultHostsFile(t *testing.T) {
	in := goldenInput(t)
	in.Overlays = []*overlaysv1alpha1.OperatingSystemProfileOverlay{overlay(t, "team", "mirror",
		"  profiles: [x]\n  provisioningConfig:\n    files: [{path: /etc/containerd/certs.d/docker.io/hosts.toml, content: {inline: {data: mirror}}}]\n")}
	res, err := NewRenderer().Render(in)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, f := range res.Config.ProvisioningConfig.Files {
		if f.Path == "/etc/containerd/certs.d/docker.io/hosts.toml" {
			found = append(found, f.Content.Inline.Data)
		}
	}
	if len(found) != 1 || found[0] != "mirror" {
		t.Errorf("docker.io hosts.toml: %q", found)
	}
}
