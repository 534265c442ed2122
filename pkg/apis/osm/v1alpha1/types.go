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
	// BootstrapPayloadSize is the size in bytes of the bootstrap user-data of
	// the view, rendered with placeholders for every secret: what a reader of
	// this OperatingSystemConfig may see (the real payload's size would tell
	// its secrets' lengths). The ProvisioningPayload tells the real one.
	// +optional
	BootstrapPayloadSize int64 `json:"bootstrapPayloadSize,omitempty"`
	// ProvisioningPayloadSize is the size in bytes of the provisioning
	// user-data of the view, as BootstrapPayloadSize.
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
	// Machines counts the BootReports of the MachineDeployment's machines:
	// provisioned with its current revision, with an older one, failed, and
	// under way. Absent when no machine reported.
	// +optional
	Machines *MachineSummary `json:"machines,omitempty"`
	// NodeJoin says how the MachineDeployment's nodes get their kubelet
	// credentials, and what the credential in their user-data can do; absent
	// while the profile's templates are not known (the profile is missing or
	// does not parse).
	// +optional
	NodeJoin *NodeJoinStatus `json:"nodeJoin,omitempty"`
	// APIServer is the API server address the MachineDeployment's nodes are
	// given (bootstrap and kubelet kubeconfigs) and where it came from;
	// absent while there are no cluster facts.
	// +optional
	APIServer *APIServerStatus `json:"apiServer,omitempty"`
	// Overlays are the OperatingSystemProfileOverlays that shaped the
	// config, in the order they were applied (or that failed to, with
	// renderError saying why).
	// +optional
	// +listType=atomic
	Overlays []OverlayReference `json:"overlays,omitempty"`
}

// NodeJoinMode is how nodes of a MachineDeployment get their kubelet credentials.
type NodeJoinMode string

// Node join modes.
const (
	// NodeJoinMachineJoin: the profile's bootstrap posts a MachineJoin. Each
	// machine exchanges the fetch credential of its user-data, once, for a
	// short-lived kubelet bootstrap credential that can become only the node
	// of that machine; the MachineDeployment has no kubelet bootstrap token and
	// its fetch credential reads no Secret.
	NodeJoinMachineJoin NodeJoinMode = "MachineJoin"
	// NodeJoinCompatibility: the profile reads the MachineDeployment's Secrets
	// with the fetch credential (.Token), as profiles written for upstream OSM
	// do: the provisioning payload and the kubelet bootstrap kubeconfig, whose
	// bootstrap token every machine of the MachineDeployment shares and which
	// can ask for a client certificate of any node name while the
	// MachineDeployment exists. Weaker than MachineJoin.
	NodeJoinCompatibility NodeJoinMode = "Compatibility"
)

// NodeJoinStatus says how nodes join and what the credential in their user-data can do.
type NodeJoinStatus struct {
	// Mode is MachineJoin or Compatibility.
	Mode NodeJoinMode `json:"mode"`
	// Message says what a node reads with the credential of its user-data.
	Message string `json:"message"`
}

// APIServerSource says where the API server address nodes are given came from.
type APIServerSource string

// Sources of the API server address. --node-api-server wins; otherwise the
// first of cluster-info, kubernetes-endpoints and kubeconfig that has one.
const (
	// APIServerFromClusterInfo: the server of kube-public/cluster-info, or of
	// the file of --cluster-info-kubeconfig.
	APIServerFromClusterInfo APIServerSource = "cluster-info"
	// APIServerFromFlag: --node-api-server.
	APIServerFromFlag APIServerSource = "flag"
	// APIServerFromEndpoints: an endpoint of kube-apiserver itself, from the
	// EndpointSlices of the Service default/kubernetes (its port named https).
	APIServerFromEndpoints APIServerSource = "kubernetes-endpoints"
	// APIServerFromKubeconfig: the server of osm-apiserver's own kubeconfig
	// of the worker cluster; never an in-cluster Service address.
	APIServerFromKubeconfig APIServerSource = "kubeconfig"
)

// APIServerStatus is the API server address nodes are given.
type APIServerStatus struct {
	// URL is the API server URL nodes are given.
	URL string `json:"url"`
	// Source is where it came from: cluster-info, flag,
	// kubernetes-endpoints or kubeconfig.
	Source APIServerSource `json:"source"`
}

// OverlayReference identifies one generation of an OperatingSystemProfileOverlay.
type OverlayReference struct {
	// Namespace of the overlay.
	Namespace string `json:"namespace"`
	// Name of the overlay.
	Name string `json:"name"`
	// Generation of the overlay's spec that was applied.
	Generation int64 `json:"generation"`
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

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +genclient
// +genclient:onlyVerbs=create

// MachineJoin is a booting node's request for the join credentials of the
// machine named in its user-data, made with the fetch credential of that
// user-data, like a TokenRequest: create-only, nothing is stored as this kind,
// and the answer is in the status of the created object. It is answered only
// for the caller's own MachineDeployment, in its namespace, while the Machine
// exists, has no Node, and has not been answered before (except again to the
// same boot, shortly after: a node whose answer got lost). Any other request
// is refused with 403 and the reason.
type MachineJoin struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec MachineJoinSpec `json:"spec"`
	// +optional
	Status MachineJoinStatus `json:"status,omitempty"`
}

// MachineJoinSpec names the machine and the boot asking.
type MachineJoinSpec struct {
	// MachineName is the Machine (cluster.k8s.io/v1alpha1), in the request's
	// namespace, the node boots as: machine-controller writes it into the
	// user-data in place of <MACHINE_NAME>.
	MachineName string `json:"machineName"`
	// BootID identifies the boot asking: the node's
	// /proc/sys/kernel/random/boot_id. A request of the same boot within the
	// retry window after the first answer is answered again.
	BootID string `json:"bootID"`
	// BootSecret is a random value the boot made for itself and keeps to
	// itself (32-128 letters and digits): the first answer records its hash,
	// and a request again within the retry window must bring the same value.
	// Unlike the boot id, which boot reports and logs show, it proves the
	// request comes from the boot that was answered. Optional, for nodes
	// provisioned by profiles older than v0.8.0.
	// +optional
	BootSecret string `json:"bootSecret,omitempty"`
}

// MachineJoinStatus is the answer: what the node needs to join as that machine.
type MachineJoinStatus struct {
	// Kubeconfig is the kubelet's bootstrap kubeconfig: the API server, its CA
	// and a token of the machine's join identity, good only for asking for a
	// client certificate of the machine's node (osm-apiserver approves no
	// other), until it expires or the node has registered.
	// +optional
	Kubeconfig []byte `json:"kubeconfig,omitempty"`
	// ExpirationTimestamp is when the token in Kubeconfig expires.
	// +optional
	ExpirationTimestamp metav1.Time `json:"expirationTimestamp,omitempty"`
	// Provisioning is the provisioning user-data of the machine's
	// MachineDeployment, as the payload <machinedeployment>-provisioning.
	// +optional
	Provisioning []byte `json:"provisioning,omitempty"`
	// ProvisioningFormat is the format of Provisioning: cloud-init or ignition.
	// +optional
	ProvisioningFormat PayloadFormat `json:"provisioningFormat,omitempty"`
	// Profile is the OperatingSystemProfile (namespace, name and version)
	// Provisioning was rendered from. Nodes report it in their BootReport.
	// +optional
	Profile ProfileReference `json:"profile,omitempty"`
	// MachineDeploymentRevision is the MachineDeployment revision (its
	// machinedeployment.clusters.k8s.io/revision annotation) Provisioning was
	// rendered for. Nodes report it in their BootReport.
	// +optional
	MachineDeploymentRevision string `json:"machineDeploymentRevision,omitempty"`
}
