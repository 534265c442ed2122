package osm

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// OperatingSystemConfig is the rendered configuration of one MachineDeployment:
// its OperatingSystemProfile filled in with data from the MachineDeployment, the
// cluster and the server's options. It is computed on request and read-only.
type OperatingSystemConfig struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	Spec   OperatingSystemConfigSpec
	Status OperatingSystemConfigStatus
}

// OperatingSystemConfigSpec is the rendered content, shaped like upstream's OSC spec.
type OperatingSystemConfigSpec struct {
	// OSName is the operating system of the node.
	OSName string
	// OSVersion is the version of the operating system.
	OSVersion string
	// CloudProvider is the cloud the node runs on, with its settings.
	CloudProvider CloudProviderSpec
	// BootstrapConfig is the rendered bootstrap configuration.
	BootstrapConfig OSCConfig
	// ProvisioningConfig is the rendered provisioning configuration.
	ProvisioningConfig OSCConfig
	// ProvisioningUtility is cloud-init or ignition.
	ProvisioningUtility string
}

// CloudProviderSpec names a cloud provider and its settings.
type CloudProviderSpec struct {
	// Name of the cloud provider.
	Name string
	// Spec holds provider-specific settings.
	Spec runtime.RawExtension
}

// OSCConfig is one rendered configuration: files, units, modules and SSH keys.
type OSCConfig struct {
	// Units are systemd units.
	Units []Unit
	// Files are written on the node.
	Files []File
	// UserSSHKeys are authorized for the node's default user.
	UserSSHKeys []string
	// CloudInitModules are passed through to cloud-init.
	CloudInitModules *CloudInitModule
}

// File is a file written on the node.
type File struct {
	// Path of the file on the node.
	Path string
	// Permissions are octal digits written as a decimal number (644 means 0644).
	Permissions int32
	// Content of the file.
	Content FileContent
}

// FileContent is the content of a file.
type FileContent struct {
	// Inline content.
	Inline *FileContentInline
}

// FileContentInline is content held in the object itself.
type FileContentInline struct {
	// Encoding of the data in the payload: "b64" or empty for plain text.
	Encoding string
	// Data is the rendered content.
	Data string
}

// Unit is a systemd unit.
type Unit struct {
	// Name of the unit, e.g. kubelet.service.
	Name string
	// Enable the unit.
	Enable *bool
	// Mask the unit.
	Mask *bool
	// Content of the unit file.
	Content *string
	// DropIns of the unit.
	DropIns []DropIn
}

// DropIn is a systemd drop-in of a unit.
type DropIn struct {
	// Name of the drop-in file.
	Name string
	// Content of the drop-in file.
	Content string
}

// CloudInitModule holds cloud-init modules.
type CloudInitModule struct {
	BootCMD        []string
	RHSubscription map[string]string
	RunCMD         []string
	YumRepos       map[string]map[string]string
	YumRepoDir     string
}

// OperatingSystemConfigStatus says where a config came from and how it rendered.
type OperatingSystemConfigStatus struct {
	// Profile is the OperatingSystemProfile the config was rendered from.
	Profile ProfileReference
	// MachineDeploymentRevision is the revision annotation of the MachineDeployment.
	MachineDeploymentRevision string
	// BootstrapPayloadSize is the size in bytes of the bootstrap user-data of
	// the view (secrets as placeholders): the real payload's size would tell
	// its secrets' lengths. The provisioningpayload says the real one.
	BootstrapPayloadSize int64
	// ProvisioningPayloadSize is the size in bytes of the provisioning
	// user-data of the view, as BootstrapPayloadSize.
	ProvisioningPayloadSize int64
	// RenderError is set when the config could not be rendered.
	RenderError string
	// Pending says what the config waits for: before it can be rendered, or
	// before it follows the MD's changed template (see v1alpha1).
	Pending string
	// Machines counts the boot reports of the MD's machines; nil when none.
	Machines *MachineSummary
	// NodeJoin says how the MachineDeployment's nodes get their kubelet
	// credentials; nil while the profile's templates are not known.
	NodeJoin *NodeJoinStatus
	// APIServer is the API server address nodes are given and where it came
	// from; nil while there are no cluster facts.
	APIServer *APIServerStatus
	// Overlays are the OperatingSystemProfileOverlays that shaped the config,
	// in the order they were applied.
	Overlays []OverlayReference
}

// NodeJoinMode is how nodes of a MachineDeployment get their kubelet credentials.
type NodeJoinMode string

// Node join modes.
const (
	// NodeJoinMachineJoin: each machine exchanges the credential of its
	// user-data, once, for kubelet credentials bound to its own name (MachineJoin).
	NodeJoinMachineJoin NodeJoinMode = "MachineJoin"
	// NodeJoinCompatibility: nodes read the MachineDeployment's Secrets, as
	// profiles written for upstream OSM do, with the kubelet bootstrap token
	// that every machine of the MachineDeployment shares.
	NodeJoinCompatibility NodeJoinMode = "Compatibility"
)

// NodeJoinStatus says how nodes join and what the credential in their user-data can do.
type NodeJoinStatus struct {
	// Mode is MachineJoin or Compatibility.
	Mode NodeJoinMode
	// Message says what a node reads with the credential of its user-data.
	Message string
}

// APIServerSource says where the API server address nodes are given came from.
type APIServerSource string

// Sources of the API server address, in the order they are tried (see v1alpha1).
const (
	APIServerFromClusterInfo APIServerSource = "cluster-info"
	APIServerFromFlag        APIServerSource = "flag"
	APIServerFromEndpoints   APIServerSource = "kubernetes-endpoints"
	APIServerFromKubeconfig  APIServerSource = "kubeconfig"
)

// APIServerStatus is the API server address nodes are given.
type APIServerStatus struct {
	URL    string
	Source APIServerSource
}

// OverlayReference identifies one generation of an OperatingSystemProfileOverlay.
type OverlayReference struct {
	Namespace  string
	Name       string
	Generation int64
}

// ProfileReference identifies one revision of an OperatingSystemProfile.
type ProfileReference struct {
	// Namespace of the profile.
	Namespace string
	// Name of the profile.
	Name string
	// Version is the profile's spec.version.
	Version string
	// Defaulted says the MachineDeployment names no profile: this is the
	// default profile of its operating system (see v1alpha1).
	Defaulted bool
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// OperatingSystemConfigList is a list of OperatingSystemConfigs.
type OperatingSystemConfigList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []OperatingSystemConfig
}

// PayloadType says which of a MachineDeployment's payloads an object is.
type PayloadType string

// Payload types.
const (
	PayloadTypeBootstrap    PayloadType = "bootstrap"
	PayloadTypeProvisioning PayloadType = "provisioning"
	// PayloadTypeEdgeScript is the join script of a MachineDeployment whose
	// cloud provider is edge: machines nobody provisions (bare metal, edge
	// boxes) run it to fetch their bootstrap configuration and join.
	PayloadTypeEdgeScript PayloadType = "edge-script"
)

// PayloadFormat is the format of the user-data.
type PayloadFormat string

// Payload formats.
const (
	PayloadFormatCloudInit PayloadFormat = "cloud-init"
	PayloadFormatIgnition  PayloadFormat = "ignition"
	// PayloadFormatShell is a bash script.
	PayloadFormatShell PayloadFormat = "shell"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ProvisioningPayload is one rendered user-data of a MachineDeployment, exactly as
// its Secret holds it. Named <machinedeployment>-bootstrap or -provisioning.
type ProvisioningPayload struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	Spec ProvisioningPayloadSpec
}

// ProvisioningPayloadSpec is the user-data and facts about it.
type ProvisioningPayloadSpec struct {
	// MachineDeployment is the name of the MachineDeployment in the same namespace.
	MachineDeployment string
	// Type is bootstrap or provisioning.
	Type PayloadType
	// Format is cloud-init or ignition.
	Format PayloadFormat
	// CloudProvider is the MachineDeployment's cloud provider.
	CloudProvider string
	// UserData is the exact user-data, with the <MACHINE_NAME> placeholder that
	// machine-controller replaces.
	UserData string
	// Size of the user-data in bytes.
	Size int64
	// SHA256 of the user-data, hex-encoded.
	SHA256 string
	// UserDataLimit is the cloud's user-data size limit in bytes; 0 means unknown.
	UserDataLimit int64
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ProvisioningPayloadList is a list of ProvisioningPayloads.
type ProvisioningPayloadList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []ProvisioningPayload
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// MachineJoin is a booting node's request for the join credentials of the
// machine named in its user-data (see v1alpha1). Nothing is stored as this
// kind: the answer is in the status of the created object.
type MachineJoin struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	Spec   MachineJoinSpec
	Status MachineJoinStatus
}

// MachineJoinSpec names the machine and the boot asking.
type MachineJoinSpec struct {
	// MachineName is the Machine, in the request's namespace, the node boots as.
	MachineName string
	// BootID identifies the boot asking.
	BootID string
	// BootSecret is a random value only the boot asking holds; empty from
	// nodes provisioned by older profiles.
	BootSecret string
}

// MachineJoinStatus is the answer: what the node needs to join as that machine.
type MachineJoinStatus struct {
	// Kubeconfig is the kubelet's bootstrap kubeconfig.
	Kubeconfig []byte
	// ExpirationTimestamp is when the token in Kubeconfig expires.
	ExpirationTimestamp metav1.Time
	// Provisioning is the provisioning user-data of the machine's MachineDeployment.
	Provisioning []byte
	// ProvisioningFormat is the format of Provisioning.
	ProvisioningFormat PayloadFormat
	// Profile is the OperatingSystemProfile Provisioning was rendered from.
	Profile ProfileReference
	// MachineDeploymentRevision is the MachineDeployment revision Provisioning
	// was rendered for.
	MachineDeploymentRevision string
}
