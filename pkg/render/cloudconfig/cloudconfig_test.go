package cloudconfig

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
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
			name: "aws",
			in:   Input{CloudProvider: "aws", KubeletVersion: "1.28.4", Spec: []byte(`{"availabilityZone":"eu-central-1b","vpcId":"vpc-1","subnetId":{"value":"subnet-1"},"region":"eu-central-1"}`)},
			want: "[global]\nZone = \"eu-central-1b\"\nVPC = \"vpc-1\"\nSubnetID = \"subnet-1\"\n",
		},
		{
			name: "azure",
			in: Input{CloudProvider: "azure", KubeletVersion: "v1.27.0", Spec: []byte(`{"tenantID":"t","subscriptionID":"s","clientID":"c","clientSecret":"x\"y",
				"location":"westeurope","resourceGroup":"rg","vnetName":"vnet","subnetName":"sn","routeTableName":"rt","securityGroupName":"sg",
				"availabilitySet":"as","loadBalancerSku":"standard"}`)},
			want: `{
  "cloud": "AZUREPUBLICCLOUD",
  "tenantId": "t",
  "subscriptionId": "s",
  "aadClientId": "c",
  "aadClientSecret": "x\"y",
  "resourceGroup": "rg",
  "location": "westeurope",
  "vnetName": "vnet",
  "subnetName": "sn",
  "routeTableName": "rt",
  "securityGroupName": "sg",
  "primaryAvailabilitySetName": "as",
  "vnetResourceGroup": "",
  "useInstanceMetadata": true,
  "loadBalancerSku": "standard"
}
`,
		},
		{
			name: "azure without availability set",
			in:   Input{CloudProvider: "azure", KubeletVersion: "1.27", Spec: []byte(`{"availabilitySet":"as","assignAvailabilitySet":false}`)},
			want: `"primaryAvailabilitySetName": "",`,
			part: true,
		},
		{
			name: "gce",
			in:   Input{CloudProvider: "gce", KubeletVersion: "1.28.0", Spec: []byte(`{"serviceAccount":"` + sa + `","zone":"europe-west3-a","network":"default","subnetwork":"sub","multizone":true,"regional":false,"tags":["a","b"]}`)},
			want: "[global]\nproject-id = \"my-project\"\nlocal-zone = \"europe-west3-a\"\nnetwork-name = \"default\"\nsubnetwork-name = \"sub\"\nmultizone = true\nregional = false\nnode-tags = \"a\"\nnode-tags = \"b\"\n",
		},
		{
			name: "openstack with password",
			in: Input{CloudProvider: "openstack", KubeletVersion: "1.28.0", Spec: []byte(`{"identityEndpoint":"https://keystone:5000/v3","username":"u","password":"p;#\\",
				"tenantName":"tenant","projectID":"pid","domainName":"default","region":"RegionOne","trustDevicePath":false,"nodeVolumeAttachLimit":25}`)},
			want: `[Global]
auth-url = "https://keystone:5000/v3"
username = "u"
password = "p;#\\"
tenant-name = "tenant"
tenant-id = "pid"
domain-name = "default"
region = "RegionOne"

[LoadBalancer]
manage-security-groups = true

[BlockStorage]
ignore-volume-az = true
trust-device-path = false
bs-version = "auto"
node-volume-attach-limit = 25
`,
		},
		{
			name: "openstack with application credentials",
			in:   Input{CloudProvider: "openstack", KubeletVersion: "1.28.0", Spec: []byte(`{"identityEndpoint":"https://k","applicationCredentialID":"id","applicationCredentialSecret":"secret","username":"ignored"}`)},
			want: "[Global]\nauth-url = \"https://k\"\napplication-credential-id = \"id\"\napplication-credential-secret = \"secret\"\ndomain-name = \"\"\nregion = \"\"\n",
			part: true,
		},
		{
			name: "vsphere",
			in:   Input{CloudProvider: "vsphere", KubeletVersion: "1.28.0", Spec: []byte(`{"vsphereURL":"vcenter.example.com:8443","username":"admin","password":"pw","datacenter":"dc","datastore":"ds","allowInsecure":true}`)},
			want: `[Global]
user = "admin"
password = "pw"
port = "8443"
insecure-flag = true

[Disk]
scsicontrollertype = "pvscsi"

[Workspace]
server = "vcenter.example.com"
datacenter = "dc"
folder = "/dc/vm"
default-datastore = "ds"

[VirtualCenter "vcenter.example.com"]
user = "admin"
password = "pw"
port = "8443"
datacenters = "dc"
`,
		},
		{
			name: "kubevirt",
			in:   Input{CloudProvider: "kubevirt", KubeletVersion: "1.28.0", Namespace: "cluster-abc", Spec: []byte(`{"auth":{"kubeconfig":{"value":"` + base64.StdEncoding.EncodeToString([]byte(kubeconfig)) + `"}}}`)},
			want: "global:\n  kubeconfig: |\n    apiVersion: v1\n    kind: Config\n  namespace: cluster-abc\n",
		},
		{
			name: "secret reference resolved",
			in: Input{CloudProvider: "aws", KubeletVersion: "1.28.0", Spec: []byte(`{"vpcId":{"secretKeyRef":{"namespace":"kube-system","name":"aws","key":"vpc"}}}`),
				Resolve: func(ref Reference) (string, error) { return "from-" + ref.Name + "-" + ref.Key, nil }},
			want: "VPC = \"from-aws-vpc\"\n",
			part: true,
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
			`cloud-config for openstack: password refers to secret kube-system/os key "pw"; only literal values are supported here`},
		{"resolver error", Input{CloudProvider: "aws", KubeletVersion: "1.28.0", Spec: []byte(`{"vpcId":{"configMapKeyRef":{"namespace":"ns","name":"cm","key":"k"}}}`),
			Resolve: func(Reference) (string, error) { return "", fmt.Errorf("configmap ns/cm not found") }}, "cloud-config for aws: vpcId: configmap ns/cm not found"},
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
	if err != nil || !strings.Contains(got, `VPC = "vpc-1"`) {
		t.Fatalf("got %q, %v; want the VPC from the providerSpec", got, err)
	}
}
