package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +genclient
// +genclient:readonly

// OperatingSystemConfig is the rendered configuration of one MachineDeployment:
// its OperatingSystemProfile filled in with data from the MachineDeployment, the
// cluster and the server's options. It is computed on request and read-only.
type OperatingSystemConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OperatingSystemConfigSpec   `json:"spec"`
	Status OperatingSystemConfigStatus `json:"status,omitempty"`
}

// OperatingSystemConfigSpec is the rendered content, shaped like upstream's OSC spec.
type OperatingSystemConfigSpec struct {
	// OSName is the operating system of the node.
	OSName string `json:"osName"`
	// OSVersion is the version of the operating system.
	OSVersion string `json:"osVersion"`
	// CloudProvider is the cloud the node runs on, with its settings.
	CloudProvider CloudProviderSpec `json:"cloudProvider"`
	// BootstrapConfig is the rendered bootstrap configuration.
	BootstrapConfig OSCConfig `json:"bootstrapConfig"`
	// ProvisioningConfig is the rendered provisioning configuration.
	ProvisioningConfig OSCConfig `json:"provisioningConfig"`
	// ProvisioningUtility is cloud-init or ignition.
	ProvisioningUtility string `json:"provisioningUtility,omitempty"`
}

// CloudProviderSpec names a cloud provider and its settings.
type CloudProviderSpec struct {
	// Name of the cloud provider.
	Name string `json:"name"`
	// Spec holds provider-specific settings.
	// +optional
	Spec runtime.RawExtension `json:"spec,omitempty"`
}

// OSCConfig is one rendered configuration: files, units, modules and SSH keys.
type OSCConfig struct {
	// Units are systemd units.
	// +optional
	Units []Unit `json:"units,omitempty"`
	// Files are written on the node.
	// +optional
	Files []File `json:"files,omitempty"`
	// UserSSHKeys are authorized for the node's default user.
	// +optional
	UserSSHKeys []string `json:"userSSHKeys,omitempty"`
	// CloudInitModules are passed through to cloud-init.
	// +optional
	CloudInitModules *CloudInitModule `json:"modules,omitempty"`
}

// File is a file written on the node.
type File struct {
	// Path of the file on the node.
	Path string `json:"path"`
	// Permissions are octal digits written as a decimal number (644 means 0644).
	// +optional
	Permissions int32 `json:"permissions,omitempty"`
	// Content of the file.
	Content FileContent `json:"content"`
}

// FileContent is the content of a file.
type FileContent struct {
	// Inline content.
	// +optional
	Inline *FileContentInline `json:"inline,omitempty"`
}

// FileContentInline is content held in the object itself.
type FileContentInline struct {
	// Encoding of the data in the payload: "b64" or empty for plain text.
	// +optional
	Encoding string `json:"encoding,omitempty"`
	// Data is the rendered content.
	Data string `json:"data"`
}

// Unit is a systemd unit.
type Unit struct {
	// Name of the unit, e.g. kubelet.service.
	Name string `json:"name"`
	// Enable the unit.
	// +optional
	Enable *bool `json:"enable,omitempty"`
	// Mask the unit.
	// +optional
	Mask *bool `json:"mask,omitempty"`
	// Content of the unit file.
	// +optional
	Content *string `json:"content,omitempty"`
	// DropIns of the unit.
	// +optional
	DropIns []DropIn `json:"dropIns,omitempty"`
}

// DropIn is a systemd drop-in of a unit.
type DropIn struct {
	// Name of the drop-in file.
	Name string `json:"name"`
	// Content of the drop-in file.
	Content string `json:"content"`
}

// CloudInitModule holds cloud-init modules.
type CloudInitModule struct {
	// +optional
	BootCMD []string `json:"bootcmd,omitempty"`
	// +optional
	RHSubscription map[string]string `json:"rh_subscription,omitempty"`
	// +optional
	RunCMD []string `json:"runcmd,omitempty"`
	// +optional
	YumRepos map[string]map[string]string `json:"yum_repos,omitempty"`
	// +optional
	YumRepoDir string `json:"yum_repo_dir,omitempty"`
}

// OperatingSystemConfigStatus says where a config came from and how it rendered.
type OperatingSystemConfigStatus struct {
	// Profile is the OperatingSystemProfile the config was rendered from.
	// +optional
	Profile ProfileReference `json:"profile,omitempty"`
	// MachineDeploymentRevision is the revision annotation of the MachineDeployment.
	// +optional
	MachineDeploymentRevision string `json:"machineDeploymentRevision,omitempty"`
	// BootstrapPayloadSize is the size in bytes of the bootstrap user-data.
	// +optional
	BootstrapPayloadSize int64 `json:"bootstrapPayloadSize,omitempty"`
	// ProvisioningPayloadSize is the size in bytes of the provisioning user-data.
	// +optional
	ProvisioningPayloadSize int64 `json:"provisioningPayloadSize,omitempty"`
	// RenderError is set when the config could not be rendered.
	// +optional
	RenderError string `json:"renderError,omitempty"`
	// Pending says what the config waits for, e.g. the syncer creating the
	// MachineDeployment's tokens (the config renders once that is done), or
	// "template changed; waits for the MD's next revision" (the config and
	// payloads are then those of the MD's current revision, rendered from its
	// MachineSet's template, until machine-controller bumps the revision). It
	// is not an error: nobody needs to act.
	// +optional
	Pending string `json:"pending,omitempty"`
}

// ProfileReference identifies one revision of an OperatingSystemProfile.
type ProfileReference struct {
	// Namespace of the profile.
	Namespace string `json:"namespace,omitempty"`
	// Name of the profile.
	Name string `json:"name,omitempty"`
	// Version is the profile's spec.version.
	Version string `json:"version,omitempty"`
	// Defaulted is true when the MachineDeployment names no profile (annotation
	// k8c.io/operating-system-profile): this is the default profile of its
	// operating system (osp-<os>; osp-flatcar-cloud-init for Flatcar on Anexia
	// with cloud-init), the one upstream OSM's webhook would have set.
	// +optional
	Defaulted bool `json:"defaulted,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// OperatingSystemConfigList is a list of OperatingSystemConfigs.
type OperatingSystemConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []OperatingSystemConfig `json:"items"`
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
// +genclient
// +genclient:readonly

// ProvisioningPayload is one rendered user-data of a MachineDeployment, exactly as
// its Secret holds it. Named <machinedeployment>-bootstrap or -provisioning, and
// for MachineDeployments on cloud provider edge also <machinedeployment>-edge-script.
type ProvisioningPayload struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ProvisioningPayloadSpec `json:"spec"`
}

// ProvisioningPayloadSpec is the user-data and facts about it.
type ProvisioningPayloadSpec struct {
	// MachineDeployment is the name of the MachineDeployment in the same namespace.
	MachineDeployment string `json:"machineDeployment"`
	// Type is bootstrap, provisioning or edge-script.
	Type PayloadType `json:"type"`
	// Format is cloud-init, ignition or shell (edge-script).
	Format PayloadFormat `json:"format"`
	// CloudProvider is the MachineDeployment's cloud provider.
	// +optional
	CloudProvider string `json:"cloudProvider,omitempty"`
	// UserData is the exact user-data, with the <MACHINE_NAME> placeholder that
	// machine-controller replaces.
	UserData string `json:"userData"`
	// Size of the user-data in bytes.
	Size int64 `json:"size"`
	// SHA256 of the user-data, hex-encoded.
	SHA256 string `json:"sha256"`
	// UserDataLimit is the cloud's user-data size limit in bytes; 0 means unknown.
	// +optional
	UserDataLimit int64 `json:"userDataLimit,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ProvisioningPayloadList is a list of ProvisioningPayloads.
type ProvisioningPayloadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ProvisioningPayload `json:"items"`
}
