package render

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
)

func goldenInput(t *testing.T) Input {
	t.Helper()
	osp, err := DecodeOSP(mustRead(t, filepath.Join("testdata", "osp-golden.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	return Input{
		OSP:               osp,
		MachineDeployment: testMachineDeployment(map[string]string{machinecontroller.AnnotationOSP: "osp-golden"}, awsUbuntu),
		Cluster:           ClusterInfo{ServerURL: "https://api:6443", CACert: "CA", BootstrapToken: "a.b", CloudInitGetterToken: "t"},
		Node:              NodeOptions{ClusterDNSIPs: []string{"10.0.0.10"}, ContainerRuntime: "containerd"},
	}
}

// TestRenderErrors checks that errors name the OSP, the config, the file or
// template and the template line, in one line.
func TestRenderErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(in *Input)
		want   string
	}{
		{"parse error in a file", func(in *Input) {
			in.OSP.Spec.ProvisioningConfig.Files[0].Content.Inline.Data = "a\nb\n{{ foo .KubeVersion }}\n"
		}, `osp-golden: provisioningConfig file /etc/golden/kubelet: template: line 3: function "foo" not defined`},
		{"execution error in a file", func(in *Input) {
			in.OSP.Spec.ProvisioningConfig.Files[0].Content.Inline.Data = "a\n{{ .NoSuchField }}\n"
		}, `osp-golden: provisioningConfig file /etc/golden/kubelet: template: line 2: at <.NoSuchField>: can't evaluate field NoSuchField in type *render.templateData`},
		{"error in a named template", func(in *Input) {
			in.OSP.Spec.BootstrapConfig.Templates["proxy"] = "x\n{{ if }}"
		}, `osp-golden: bootstrapConfig template proxy: template: line 2: missing value for if`},
		{"unknown named template", func(in *Input) {
			in.OSP.Spec.BootstrapConfig.Files[0].Content.Inline.Data = `{{ template "nope" }}`
		}, `osp-golden: bootstrapConfig file /etc/golden/bootstrap: template: line 1: at <{{template "nope"}}>: template "nope" not defined`},
		{"provisioning utility mismatch", func(in *Input) {
			in.OSP.Spec.ProvisioningUtility = ospv1alpha1.ProvisioningUtilityIgnition
		}, `osp-golden: provisioning utility "ignition" does not match machinedeployment kube-system/md-1, which needs "cloud-init"`},
		{"operating system mismatch", func(in *Input) {
			in.OSP.Spec.OSName = ospv1alpha1.OperatingSystemFlatcar
		}, `machinedeployment kube-system/md-1: operating system "ubuntu" does not match osp-golden, which is for "flatcar"`},
		{"cloud provider the profile does not support", func(in *Input) {
			in.MachineDeployment.Spec.Template.Spec.ProviderSpec.Value.Raw = []byte(strings.Replace(awsUbuntu, `"aws"`, `"hetzner"`, 1))
		}, `machinedeployment kube-system/md-1: cloud provider "hetzner" is not supported by operatingsystemprofile osp-golden (supportedCloudProviders: aws)`},
		{"unknown cloud provider", func(in *Input) {
			in.MachineDeployment.Spec.Template.Spec.ProviderSpec.Value.Raw = []byte(strings.Replace(awsUbuntu, `"aws"`, `"mars"`, 1))
		}, `machinedeployment kube-system/md-1: cloud provider "mars" is not supported by operatingsystemprofile osp-golden (supportedCloudProviders: aws)`},
		{"bad kubelet annotation", func(in *Input) {
			in.MachineDeployment.Annotations[machinecontroller.KubeletConfigAnnotationPrefix+"MaxPods"] = "lots"
		}, `machinedeployment kube-system/md-1: annotation v1.kubelet-config.machine-controller.kubermatic.io/MaxPods: invalid integer "lots"`},
		{"unknown providerSpec field", func(in *Input) {
			in.MachineDeployment.Spec.Template.Spec.ProviderSpec.Value.Raw = []byte(`{"cloudProvider":"aws","operatingSystem":"ubuntu","bogus":1}`)
		}, `machinedeployment kube-system/md-1: providerSpec.value: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := goldenInput(t)
			tc.modify(&in)
			_, err := NewRenderer().Render(in)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error:\n %v\nwant one line starting with\n %s", err, tc.want)
			}
		})
	}
}

// TestRenderDoesNotMutate checks that the OSP and MachineDeployment, which come
// from shared informer caches, are left as they were.
func TestRenderDoesNotMutate(t *testing.T) {
	in := goldenInput(t)
	in.MachineDeployment.Spec.Template.Spec.ProviderSpec.Value.Raw = []byte(strings.Replace(awsUbuntu, `"ubuntu"`, `"rhel"`, 1))
	in.OSP.Spec.OSName = ospv1alpha1.OperatingSystemRHEL
	osp, md := in.OSP.DeepCopy(), in.MachineDeployment.DeepCopy()
	res, err := NewRenderer().Render(in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Config.ProvisioningConfig.CloudInitModules == nil || res.Config.ProvisioningConfig.CloudInitModules.RHSubscription == nil {
		t.Error("RHEL render without rh_subscription")
	}
	if !reflect.DeepEqual(osp, in.OSP) || !reflect.DeepEqual(md, in.MachineDeployment) {
		t.Error("Render modified its input")
	}
}
