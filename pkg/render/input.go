package render

import (
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
)

// Input is everything that affects one render. Render never mutates OSP or
// MachineDeployment: they come from shared informer caches.
type Input struct {
	OSP *ospv1alpha1.OperatingSystemProfile
	// Overlays extend the OSP, applied in this order (see docs/overlays.md);
	// the caller has chosen those that apply to the MachineDeployment.
	Overlays          []*overlaysv1alpha1.OperatingSystemProfileOverlay
	MachineDeployment *clusterv1alpha1.MachineDeployment
	Cluster           ClusterInfo
	Node              NodeOptions
	// View renders what a reader of OperatingSystemConfigs sees: the same
	// output from inputs whose secrets — tokens, registry and proxy
	// credentials, RHEL subscription credentials, the cloud's configuration
	// and providerSpec — are placeholders (see view.go).
	View bool
}

// ClusterInfo holds the facts about the cluster that nodes join.
type ClusterInfo struct {
	// ServerURL is the kube-apiserver URL as nodes reach it (from the cluster-info kubeconfig).
	ServerURL string
	// CACert is the PEM of the API server's CA (from the cluster-info kubeconfig).
	CACert string
	// KubernetesCACert is the PEM written as the cluster CA on nodes; empty means CACert.
	KubernetesCACert string
	// HostCACert is an extra PEM trusted by the host, may be empty.
	HostCACert string
	// BootstrapToken is the "ID.SECRET" kubelet TLS-bootstrap token.
	BootstrapToken string
	// CloudInitGetterToken is the bearer token the bootstrap payload uses to fetch
	// its provisioning Secret.
	CloudInitGetterToken string
}

// NodeOptions is everything from the node flags, already parsed and validated.
type NodeOptions struct {
	// ClusterDNSIPs are the cluster DNS service IPs for the kubelet.
	ClusterDNSIPs []string
	// ContainerRuntime selects the OSP's supportedContainerRuntimes entry (containerd).
	ContainerRuntime string
	// ExternalCloudProvider makes the kubelet use --cloud-provider=external.
	ExternalCloudProvider bool
	// InitialTaints are registered by the kubelet, "key=value:Effect,...".
	InitialTaints string
	// HTTPProxy and NoProxy are the proxy settings of the node.
	HTTPProxy, NoProxy string
	// InsecureRegistries are registries contacted without TLS verification.
	InsecureRegistries []string
	// RegistryMirrors are mirrors of docker.io ("registry=mirror" entries name another registry).
	RegistryMirrors []string
	// ContainerdRegistryMirrors are mirrors per registry.
	ContainerdRegistryMirrors map[string][]string
	// RegistryCredentials are the credentials per registry host.
	RegistryCredentials map[string]RegistryAuth
	// PauseImage is the sandbox image of the container runtime.
	PauseImage string
	// KubeletFeatureGates are written into the kubelet configuration.
	KubeletFeatureGates map[string]bool
	// DeviceOwnershipFromSecurityContext is written into the containerd configuration.
	DeviceOwnershipFromSecurityContext bool
}

// RegistryAuth is the login to one registry, as in a dockerconfigjson "auths" entry.
type RegistryAuth struct {
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	Auth          string `json:"auth,omitempty"`
	IdentityToken string `json:"identitytoken,omitempty"`
}

// Result is one render: the OperatingSystemConfig spec and both payloads.
type Result struct {
	Config       osm.OperatingSystemConfigSpec
	Bootstrap    Payload
	Provisioning Payload
	// EdgeScript is the join script of an MD on cloud provider edge; nil
	// for every other cloud.
	EdgeScript *Payload
}

// Payload is one user-data, exactly as its Secret holds it.
type Payload struct {
	Format   osm.PayloadFormat
	UserData []byte
}
