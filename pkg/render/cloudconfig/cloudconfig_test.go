package cloudconfig

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"k8c.io/machine-controller/sdk/providerconfig"
)

func TestGenerate(t *testing.T) {
	sa := base64.StdEncoding.EncodeToString([]byte(`{"project_id":"my-project","type":"service_account"}`))
	kubeconfig := "apiVersion: v1\nkind: Config\n"
	for _, tc := range []struct {
		name string
		in   Input
		want string
		// part says want is a part of the output, not all of it.
		part bool
	}{
		{
			name: "azure without availability set",
			in:   Input{CloudProvider: "azure", KubeletVersion: "1.27", Spec: []byte(`{"availabilitySet":"as","assignAvailabilitySet":false}`)},
			want: `"primaryAvailabilitySetName":"",`,
			part: true,
		},
		{
			name: "gce",
			in:   Input{CloudProvider: "gce", KubeletVersion: "1.28.0", Spec: []byte(`{"serviceAccount":"` + sa + `","zone":"europe-west3-a","network":"default","subnetwork":"sub","multizone":true,"regional":false,"tags":["a","b"]}`)},
			want: "[global]\nproject-id = \"my-project\"\nlocal-zone = \"europe-west3-a\"\nnetwork-name = \"default\"\nsubnetwork-name = \"sub\"\nmultizone = true\nregional = false\nnode-tags = \"a\"\nnode-tags = \"b\"\n",
		},
		{
			name: "openstack with application credentials",
			in:   Input{CloudProvider: "openstack", KubeletVersion: "1.28.0", Spec: []byte(`{"identityEndpoint":"https://k","applicationCredentialID":"id","applicationCredentialSecret":"secret","username":"ignored"}`)},
			want: "[Global]\nauth-url    = \"https://k\"\napplication-credential-id     = \"id\"\napplication-credential-secret = \"secret\"\ndomain-name = \"\"\nregion      = \"\"\n",
			part: true,
		},
		{
			name: "kubevirt",
			in:   Input{CloudProvider: "kubevirt", KubeletVersion: "1.28.0", Namespace: "cluster-abc", Spec: []byte(`{"auth":{"kubeconfig":{"value":"` + base64.StdEncoding.EncodeToString([]byte(kubeconfig)) + `"}}}`)},
			want: "global:\n    kubeconfig: |\n        apiVersion: v1\n        kind: Config\n    namespace: cluster-abc\n",
		},
		{name: "external cloud provider", in: Input{CloudProvider: "aws", ExternalCloudProvider: true, KubeletVersion: "1.28.0", Spec: []byte(`{}`)}},
		{name: "kubelet 1.29", in: Input{CloudProvider: "openstack", KubeletVersion: "1.29.0", Spec: []byte(`{}`)}},
		{name: "kubelet 1.31 with empty spec", in: Input{CloudProvider: "openstack", KubeletVersion: "1.31.0", Spec: []byte(`{}`)}},
		{name: "cloud without cloud-config", in: Input{CloudProvider: "hetzner", KubeletVersion: "1.28.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Generate(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if tc.part && !strings.Contains(got, tc.want) {
				t.Errorf("got:\n%s\nwant it to contain %q", got, tc.want)
			}
			if !tc.part && got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestGenerateErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Input
		want string
	}{
		{"unknown cloud", Input{CloudProvider: "moon", KubeletVersion: "1.28.0"}, `cloud-config: unknown cloud provider "moon"`},
		{"bad version", Input{CloudProvider: "aws", KubeletVersion: "latest"}, `kubelet version "latest" is not MAJOR.MINOR`},
		{"empty spec", Input{CloudProvider: "aws", KubeletVersion: "1.28.0"}, "cloud-config for aws: cloudProviderSpec is empty"},
		{"secret reference", Input{CloudProvider: "openstack", KubeletVersion: "1.28.0", Spec: []byte(`{"password":{"secretKeyRef":{"namespace":"kube-system","name":"os","key":"pw"}}}`)},
			`cloud-config for openstack: password refers to secret kube-system/os key "pw"; references are not resolved: set the value inline, or use an external cloud provider`},
		{"configmap reference", Input{CloudProvider: "aws", KubeletVersion: "1.28.0", Spec: []byte(`{"vpcId":{"configMapKeyRef":{"namespace":"ns","name":"cm","key":"k"}}}`)},
			`cloud-config for aws: vpcId refers to configmap ns/cm key "k"; references are not resolved`},
		{"gce without account", Input{CloudProvider: "gce", KubeletVersion: "1.28.0", Spec: []byte(`{"zone":"z"}`)}, "serviceAccount is empty"},
		{"kubevirt kubeconfig not base64", Input{CloudProvider: "kubevirt", KubeletVersion: "1.28.0", Spec: []byte(`{"auth":{"kubeconfig":"apiVersion: v1"}}`)}, "auth.kubeconfig is not base64"},
		{"invalid spec", Input{CloudProvider: "vsphere", KubeletVersion: "1.28.0", Spec: []byte(`{"cpus":"two"}`)}, "cloud-config for vsphere: cloudProviderSpec: json: cannot unmarshal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestInputFor(t *testing.T) {
	var pc providerconfig.Config
	if err := json.Unmarshal([]byte(`{"cloudProvider":"aws","cloudProviderSpec":{"vpcId":"vpc-1"}}`), &pc); err != nil {
		t.Fatal(err)
	}
	got, err := Generate(InputFor(&pc, "1.28.1"))
	if err != nil || !strings.Contains(got, `VPC="vpc-1"`) {
		t.Fatalf("got %q, %v; want the VPC from the providerSpec", got, err)
	}
}
