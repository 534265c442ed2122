package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// OperatingSystem is the name of a supported operating system.
type OperatingSystem string

// Operating systems an OperatingSystemProfile can describe.
const (
	OperatingSystemUbuntu       OperatingSystem = "ubuntu"
	OperatingSystemFlatcar      OperatingSystem = "flatcar"
	OperatingSystemRHEL         OperatingSystem = "rhel"
	OperatingSystemAmazonLinux2 OperatingSystem = "amzn2"
	OperatingSystemRockyLinux   OperatingSystem = "rockylinux"
)

// ProvisioningUtility is the tool that applies a payload on the node.
type ProvisioningUtility string

// Provisioning utilities.
const (
	ProvisioningUtilityCloudInit ProvisioningUtility = "cloud-init"
	ProvisioningUtilityIgnition  ProvisioningUtility = "ignition"
)

// CloudProvider is the name of a cloud provider as machine-controller spells it.
type CloudProvider string

// ContainerRuntime is the name of a container runtime.
type ContainerRuntime string

// Container runtimes.
const (
	ContainerRuntimeContainerd ContainerRuntime = "containerd"
	ContainerRuntimeDocker     ContainerRuntime = "docker"
)

// +genclient
// +genclient:onlyVerbs=get,list,watch,create,update,patch,delete
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// OperatingSystemProfile describes how to prepare one operating system for a
// Kubernetes node: templated files, systemd units and cloud-init modules.
type OperatingSystemProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec OperatingSystemProfileSpec `json:"spec"`
}

// OperatingSystemProfileSpec is the desired content of an OperatingSystemProfile.
type OperatingSystemProfileSpec struct {
	// OSName is the operating system this profile prepares.
	OSName OperatingSystem `json:"osName"`
	// OSVersion is the version of the operating system.
	OSVersion string `json:"osVersion"`
	// Version of the profile itself; it must change whenever the spec changes.
	Version string `json:"version"`
	// ProvisioningUtility applies the payloads on the node: cloud-init or ignition.
	ProvisioningUtility ProvisioningUtility `json:"provisioningUtility,omitempty"`
	// SupportedCloudProviders lists the clouds this profile works on.
	SupportedCloudProviders []CloudProviderSpec `json:"supportedCloudProviders"`
	// BootstrapConfig becomes the small bootstrap payload passed as VM user-data.
	BootstrapConfig OSPConfig `json:"bootstrapConfig"`
	// ProvisioningConfig becomes the provisioning payload the bootstrap fetches.
	ProvisioningConfig OSPConfig `json:"provisioningConfig"`
}

// CloudProviderSpec names a cloud provider and its optional settings.
type CloudProviderSpec struct {
	Name CloudProvider `json:"name"`
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Spec runtime.RawExtension `json:"spec,omitempty"`
}

// OSPConfig is one templated configuration of a profile.
type OSPConfig struct {
	// SupportedContainerRuntimes holds files and named templates per container runtime.
	SupportedContainerRuntimes []ContainerRuntimeSpec `json:"supportedContainerRuntimes,omitempty"`
	// Templates are named templates usable from files with {{ template "name" }}.
	Templates map[string]string `json:"templates,omitempty"`
	// Units are systemd units.
	Units []Unit `json:"units,omitempty"`
	// Files are written on the node.
	Files []File `json:"files,omitempty"`
	// CloudInitModules are passed through to cloud-init.
	CloudInitModules *CloudInitModule `json:"modules,omitempty"`
}

// ContainerRuntimeSpec holds what a profile needs for one container runtime.
type ContainerRuntimeSpec struct {
	Name      ContainerRuntime  `json:"name"`
	Files     []File            `json:"files"`
	Templates map[string]string `json:"templates,omitempty"`
}

// File is a file written on the node.
type File struct {
	Path string `json:"path"`
	// Permissions are octal digits written as a decimal number (644 means 0644).
	// +kubebuilder:default=644
	// +optional
	Permissions int32       `json:"permissions,omitempty"`
	Content     FileContent `json:"content"`
}

// FileContent is the content of a file.
type FileContent struct {
	// +optional
	Inline *FileContentInline `json:"inline,omitempty"`
}

// FileContentInline is content held in the profile itself.
type FileContentInline struct {
	// Encoding of the rendered data in the payload: "b64" or empty for plain text.
	// +optional
	Encoding string `json:"encoding,omitempty"`
	Data     string `json:"data"`
}

// Unit is a systemd unit.
type Unit struct {
	Name string `json:"name"`
	// +optional
	Enable *bool `json:"enable,omitempty"`
	// +optional
	Mask *bool `json:"mask,omitempty"`
	// +optional
	Content *string `json:"content,omitempty"`
	// +optional
	DropIns []DropIn `json:"dropIns,omitempty"`
}

// DropIn is a systemd drop-in of a unit.
type DropIn struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// CloudInitModule holds the cloud-init modules a profile may set.
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

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// OperatingSystemProfileList is a list of OperatingSystemProfiles.
type OperatingSystemProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []OperatingSystemProfile `json:"items"`
}
