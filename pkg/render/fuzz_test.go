package render

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRender renders arbitrary file and named-template content: whatever an
// OSP holds, Render returns a result or an error naming the OSP, and never panics.
func FuzzRender(f *testing.F) {
	base, err := DecodeOSP(mustRead(f, filepath.Join("testdata", "osp-golden.yaml")))
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][2]string{
		{`{{ .KubeVersion }}`, `{{ .HTTPProxy }}`},
		{`{{- template "fuzz" }}{{ template "proxy" . }}`, `{{ if .ExternalCloudProvider }}x{{ end }}`},
		{`{{ range $k, $v := .KubeletFeatureGates }}{{ $k }}{{ end }}{{ .BootstrapKubeconfig }}`, `{{ toYaml .ClusterDNSIPs }}`},
		{`{{ define "fuzz" }}local{{ end }}{{ template "fuzz" }}`, `{{`},
		{`{{ semverCompare ">=1.30" .KubeVersion }} {{ fromToml "a = 1" }}`, `{{ index .NoProxy 3 }}`},
	} {
		f.Add(seed[0], seed[1])
	}
	r := NewRenderer()
	f.Fuzz(func(t *testing.T, file, named string) {
		osp := base.DeepCopy()
		osp.Spec.ProvisioningConfig.Files[0].Content.Inline.Data = file
		osp.Spec.BootstrapConfig.Templates["fuzz"] = named
		osp.Spec.BootstrapConfig.Files[0].Content.Inline.Data = file
		in := Input{
			OSP:               osp,
			MachineDeployment: testMachineDeployment(nil, awsUbuntu),
			Cluster:           ClusterInfo{ServerURL: "https://api:6443", CACert: "CA", BootstrapToken: "a.b", CloudInitGetterToken: "t"},
			Node:              NodeOptions{ClusterDNSIPs: []string{"10.0.0.10"}, ContainerRuntime: "containerd", HTTPProxy: "http://p"},
		}
		res, err := r.Render(in)
		if err != nil {
			if !strings.HasPrefix(err.Error(), osp.Name+": ") {
				t.Errorf("error does not name the OSP: %v", err)
			}
			return
		}
		if len(res.Bootstrap.UserData) == 0 || len(res.Provisioning.UserData) == 0 {
			t.Error("empty payload without an error")
		}
	})
}
