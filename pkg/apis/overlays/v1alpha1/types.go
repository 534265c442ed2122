package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
)

// +genclient
// +genclient:onlyVerbs=get,list,watch,create,update,patch,delete,updateStatus
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// OperatingSystemProfileOverlay adds files, units, drop-ins and cloud-init
// commands to the OperatingSystemProfiles it names, or replaces some of
// theirs, for the MachineDeployments it selects: an extra CA, NTP servers or
// a registry mirror without a copy of the profile.
type OperatingSystemProfileOverlay struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec OperatingSystemProfileOverlaySpec `json:"spec"`
	// +optional
	Status OperatingSystemProfileOverlayStatus `json:"status,omitempty"`
}

// OperatingSystemProfileOverlaySpec says what an overlay applies to and what
// it adds or replaces.
type OperatingSystemProfileOverlaySpec struct {
	// Profiles are the OperatingSystemProfiles the overlay extends: "name"
	// (a profile of that name in any namespace) or "namespace/name".
	// +listType=set
	Profiles []string `json:"profiles"`
	// MachineDeploymentSelector selects MachineDeployments by their labels;
	// empty selects every MachineDeployment of the profiles.
	// +optional
	MachineDeploymentSelector *metav1.LabelSelector `json:"machineDeploymentSelector,omitempty"`
	// Namespaces are the namespaces whose MachineDeployments the overlay
	// selects. Only an overlay in osm-apiserver's own namespace (--namespace,
	// kube-system by default) may name others than its own; there, empty
	// means every namespace. Elsewhere an overlay selects MachineDeployments
	// of its own namespace only, and naming another makes it invalid.
	// +optional
	// +listType=set
	Namespaces []string `json:"namespaces,omitempty"`
	// BootstrapConfig extends the profiles' bootstrap configuration: what
	// the VM gets as user-data, so mind the cloud's size limit.
	// +optional
	BootstrapConfig OverlayConfig `json:"bootstrapConfig,omitempty"`
	// ProvisioningConfig extends the profiles' provisioning configuration.
	// +optional
	ProvisioningConfig OverlayConfig `json:"provisioningConfig,omitempty"`
}

// OverlayConfig is what an overlay adds to one configuration of a profile.
type OverlayConfig struct {
	// Templates are named templates the overlay's files (and the profile's)
	// may call with {{ template "name" }}; one named as a template of the
	// profile replaces it.
	// +optional
	Templates map[string]string `json:"templates,omitempty"`
	// Files are added; one with the path of a profile's file replaces it.
	// Their content is a template, executed as a profile's file is: with the
	// same data and functions, within the same render budget.
	// +optional
	// +listType=map
	// +listMapKey=path
	Files []ospv1alpha1.File `json:"files,omitempty"`
	// Units are systemd units, added; one named as a profile's unit replaces
	// it. Their content is not a template, as a profile's unit's is not. On
	// operating systems other than Flatcar, whose cloud-init does not write
	// units, a unit is written as a file in /etc/systemd/system (drop-ins
	// in <unit>.d/) and enabled or masked by commands after the profile's.
	// +optional
	// +listType=map
	// +listMapKey=name
	Units []ospv1alpha1.Unit `json:"units,omitempty"`
	// DropIns are added to the unit they name, which the profile (or the
	// overlay) may or may not define; one with a name the unit's drop-ins
	// have replaces it.
	// +optional
	// +listType=map
	// +listMapKey=unit
	// +listMapKey=name
	DropIns []UnitDropIn `json:"dropIns,omitempty"`
	// Modules are cloud-init modules: commands are appended to the
	// profile's, yum repositories added (one of the same name replaces the
	// profile's).
	// +optional
	Modules *OverlayModules `json:"modules,omitempty"`
}

// UnitDropIn is a systemd drop-in for one unit.
type UnitDropIn struct {
	// Unit is the name of the unit, e.g. containerd.service.
	Unit string `json:"unit"`
	// Name of the drop-in file, e.g. 10-proxy.conf.
	Name string `json:"name"`
	// Content of the drop-in file.
	Content string `json:"content"`
}

// OverlayModules are the cloud-init modules an overlay may extend.
type OverlayModules struct {
	// BootCMD commands run early on every boot, after the profile's.
	// +optional
	// +listType=atomic
	BootCMD []string `json:"bootcmd,omitempty"`
	// RunCMD commands run once, at the end of the first boot, after the
	// profile's.
	// +optional
	// +listType=atomic
	RunCMD []string `json:"runcmd,omitempty"`
	// YumRepos are yum repositories by name (EL distributions).
	// +optional
	YumRepos map[string]map[string]string `json:"yum_repos,omitempty"`
}

// OperatingSystemProfileOverlayStatus is what osm-apiserver found when it
// applied the overlay.
type OperatingSystemProfileOverlayStatus struct {
	// ObservedGeneration is the generation the status is of.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// MachineDeployments is how many MachineDeployments the overlay selects.
	// +optional
	MachineDeployments int32 `json:"machineDeployments"`
	// Conditions: Ready says whether the overlay applies to every
	// MachineDeployment it selects, or why not (Invalid, Conflict,
	// RenderFailed), naming the first MachineDeployments it fails for.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ConditionReady is the condition that says whether an overlay applies.
const ConditionReady = "Ready"

// Reasons of ConditionReady.
const (
	// ReasonApplied: the overlay shapes every MachineDeployment it selects
	// (that has rendered).
	ReasonApplied = "Applied"
	// ReasonInvalid: the overlay cannot apply to anything: a template does
	// not parse, its selector is malformed, or it names a namespace it may
	// not reach.
	ReasonInvalid = "Invalid"
	// ReasonConflict: another overlay applying to the same
	// MachineDeployments sets the same file, unit, drop-in or template.
	ReasonConflict = "Conflict"
	// ReasonRenderFailed: the overlay's templates fail for some
	// MachineDeployments.
	ReasonRenderFailed = "RenderFailed"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// OperatingSystemProfileOverlayList is a list of OperatingSystemProfileOverlays.
type OperatingSystemProfileOverlayList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []OperatingSystemProfileOverlay `json:"items"`
}
