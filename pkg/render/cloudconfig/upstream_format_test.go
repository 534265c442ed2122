package cloudconfig

import (
	"encoding/base64"
	"testing"
)

// TestUpstreamFormat pins the exact text upstream writes to
// /etc/kubernetes/cloud-config: payload comparisons look at file contents
// byte for byte, so spacing, quoting and JSON/YAML layout must match. Expected
// strings are those of upstream's own cloud-config tests
// (pkg/cloudprovider/<cloud>/types/cloudconfig_test.go); openstack's follows
// its template at the newest stored commit (a39ef6b), which adds [LoadBalancer]
// defaults to what its older test shows.
func TestUpstreamFormat(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Input
		want string
	}{
		{
			name: "aws",
			in:   Input{CloudProvider: "aws", KubeletVersion: "1.28.0", Spec: []byte(`{"availabilityZone":"zone","vpcId":"vpc-id","subnetId":"subnet-id"}`)},
			want: "[global]\nZone=\"zone\"\nVPC=\"vpc-id\"\nSubnetID=\"subnet-id\"\n",
		},
		{
			name: "azure",
			in: Input{CloudProvider: "azure", KubeletVersion: "1.28.0", Spec: []byte(`{"resourceGroup":"rg-name","location":"unknown","vnetName":"vnet-name",
				"subnetName":"subnet-name","routeTableName":"route-table-name","securityGroupName":"sg-name","vnetResourceGroup":"vnet-rg-name","loadBalancerSku":"sku"}`)},
			want: `{"cloud":"AZUREPUBLICCLOUD","tenantId":"","subscriptionId":"","aadClientId":"","aadClientSecret":"","resourceGroup":"rg-name","location":"unknown","vnetName":"vnet-name","subnetName":"subnet-name","routeTableName":"route-table-name","securityGroupName":"sg-name","primaryAvailabilitySetName":"","vnetResourceGroup":"vnet-rg-name","useInstanceMetadata":true,"loadBalancerSku":"sku"}`,
		},
		{
			name: "gce",
			in: Input{CloudProvider: "gce", KubeletVersion: "1.28.0", Spec: []byte(`{"serviceAccount":"` +
				base64.StdEncoding.EncodeToString([]byte(`{"project_id":"project-id"}`)) +
				`","zone":"zone","network":"network","subnetwork":"subnetwork","multizone":true,"regional":true,"tags":["tag1","tag2"]}`)},
			want: "[global]\nproject-id = \"project-id\"\nlocal-zone = \"zone\"\nnetwork-name = \"network\"\nsubnetwork-name = \"subnetwork\"\nmultizone = true\nregional = true\nnode-tags = \"tag1\"\nnode-tags = \"tag2\"\n",
		},
		{
			name: "vsphere",
			in: Input{CloudProvider: "vsphere", KubeletVersion: "1.28.0", Spec: []byte(`{"vsphereURL":"hostname:9090","username":"username","password":"password",
				"allowInsecure":true,"cluster":"test","datacenter":"datacenter","datastore":"datastore","folder":"workingDir"}`)},
			want: `[Global]
user              = "username"
password          = "password"
port              = "9090"
insecure-flag     = true

[Disk]
scsicontrollertype = "pvscsi"

[Workspace]
server            = "hostname"
datacenter        = "datacenter"
folder            = "workingDir"
default-datastore = "datastore"


[VirtualCenter "hostname"]
user = "username"
password = "password"
port = 9090
datacenters = "datacenter"

`,
		},
		{
			name: "vsphere datastore cluster and default folder",
			in:   Input{CloudProvider: "vsphere", KubeletVersion: "1.28.0", Spec: []byte(`{"vsphereURL":"https://vc","datacenter":"dc","datastoreCluster":"dsc"}`)},
			want: `[Global]
user              = ""
password          = ""
port              = ""
insecure-flag     = false

[Disk]
scsicontrollertype = "pvscsi"

[Workspace]
server            = "vc"
datacenter        = "dc"
folder            = "/dc/vm"
default-datastore = "dsc"


[VirtualCenter "vc"]
user = ""
password = ""
port = 
datacenters = "dc"

`,
		},
		{
			name: "kubevirt",
			in: Input{CloudProvider: "kubevirt", KubeletVersion: "1.28.0", Namespace: "kube-system",
				Spec: []byte(`{"auth":{"kubeconfig":{"value":"` + base64.StdEncoding.EncodeToString([]byte("redacted")) + `"}}}`)},
			want: "global:\n    kubeconfig: redacted\n    namespace: kube-system\n",
		},
		{
			name: "openstack with password",
			in: Input{CloudProvider: "openstack", KubeletVersion: "1.28.0", Spec: []byte(`{"identityEndpoint":"https://keystone:5000/v3","username":"u","password":"p",
				"tenantName":"tenant","projectID":"pid","domainName":"default","region":"RegionOne","nodeVolumeAttachLimit":25}`)},
			want: `[Global]
auth-url    = "https://keystone:5000/v3"
username    = "u"
password    = "p"
tenant-name = "tenant"
tenant-id   = "pid"
domain-name = "default"
region      = "RegionOne"

[LoadBalancer]
lb-version = "v2"
subnet-id = ""
floating-network-id = ""
lb-method = "ROUND_ROBIN"
lb-provider = ""
manage-security-groups = true

[BlockStorage]
ignore-volume-az  = true
trust-device-path = false
bs-version        = "auto"
node-volume-attach-limit = 25
`,
		},
		{
			name: "openstack with application credentials",
			in: Input{CloudProvider: "openstack", KubeletVersion: "v1.28.3", Spec: []byte(`{"identityEndpoint":"https://test","applicationCredentialID":"redacted",
				"applicationCredentialSecret":"redacted","username":"username","domainName":"domain","region":"unknown","trustDevicePath":true}`)},
			want: `[Global]
auth-url    = "https://test"
application-credential-id     = "redacted"
application-credential-secret = "redacted"
domain-name = "domain"
region      = "unknown"

[LoadBalancer]
lb-version = "v2"
subnet-id = ""
floating-network-id = ""
lb-method = "ROUND_ROBIN"
lb-provider = ""
manage-security-groups = true

[BlockStorage]
ignore-volume-az  = true
trust-device-path = true
bs-version        = "auto"
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Generate(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
