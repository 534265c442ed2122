package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
)

// +genclient
// +genclient:nonNamespaced
// +genclient:onlyVerbs=create
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ProfileReview previews a change before it rolls, as a SubjectAccessReview
// answers a question: create one with a candidate OperatingSystemProfile or
// OperatingSystemProfileOverlay in its spec, and the answer, in its status,
// says for every MachineDeployment the candidate would reach (and the caller
// may read) what would change in its rendered config and payloads. Nothing
// is stored.
type ProfileReview struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ProfileReviewSpec `json:"spec"`
	// +optional
	Status ProfileReviewStatus `json:"status,omitempty"`
}

// ProfileReviewSpec holds the candidate: exactly one of
// operatingSystemProfile and overlay.
type ProfileReviewSpec struct {
	// OperatingSystemProfile is the candidate profile: it takes the place of
	// the profile of its namespace (kube-system if empty) and name, or is
	// added, for the review only.
	// +optional
	OperatingSystemProfile *ospv1alpha1.OperatingSystemProfile `json:"operatingSystemProfile,omitempty"`
	// Overlay is the candidate overlay: it takes the place of the overlay of
	// its namespace and name, or is added, for the review only.
	// +optional
	Overlay *overlaysv1alpha1.OperatingSystemProfileOverlay `json:"overlay,omitempty"`
	// Namespace narrows the review to the MachineDeployments of one namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// MachineDeploymentSelector narrows the review to the MachineDeployments
	// with these labels.
	// +optional
	MachineDeploymentSelector *metav1.LabelSelector `json:"machineDeploymentSelector,omitempty"`
}

// ProfileReviewStatus is the answer: one review per MachineDeployment, by
// namespace and name.
type ProfileReviewStatus struct {
	// Reviewed is how many MachineDeployments the candidate reaches that the
	// caller may read: only those are reviewed (and named).
	Reviewed int32 `json:"reviewed"`
	// Changed is how many of them would get other payloads.
	Changed int32 `json:"changed"`
	// Failed is how many of them would fail to render (and keep their
	// current payloads).
	Failed int32 `json:"failed"`
	// MachineDeployments are the reviews.
	// +optional
	// +listType=atomic
	MachineDeployments []MachineDeploymentReview `json:"machineDeployments,omitempty"`
}

// MachineDeploymentReview is what a candidate changes for one
// MachineDeployment. Contents are those of the OperatingSystemConfig, the
// view rendered from placeholders for every secret.
type MachineDeploymentReview struct {
	// Namespace of the MachineDeployment.
	Namespace string `json:"namespace"`
	// Name of the MachineDeployment.
	Name string `json:"name"`
	// Changed says whether the MachineDeployment's payloads, the user-data of
	// its new machines, would change.
	Changed bool `json:"changed"`
	// Error is the render error the candidate would cause, or leave: the
	// MachineDeployment then keeps its current payloads.
	// +optional
	Error string `json:"error,omitempty"`
	// PreviousError is the render error the MachineDeployment has now.
	// +optional
	PreviousError string `json:"previousError,omitempty"`
	// Pending says what the MachineDeployment's render waits for (its
	// tokens, the cluster facts): it cannot be compared yet.
	// +optional
	Pending string `json:"pending,omitempty"`
	// Overlays are the overlays that would shape the config.
	// +optional
	// +listType=atomic
	Overlays []OverlayReference `json:"overlays,omitempty"`
	// Bootstrap is the size of the bootstrap payload, the VM's user-data,
	// before and after, and the cloud's limit.
	Bootstrap PayloadReview `json:"bootstrap"`
	// Provisioning is the size of the provisioning payload before and after.
	Provisioning PayloadReview `json:"provisioning"`
	// Files added, removed or changed, by config and path.
	// +optional
	// +listType=atomic
	Files []ItemReview `json:"files,omitempty"`
	// Units and their drop-ins (unit/drop-in) added, removed or changed.
	// +optional
	// +listType=atomic
	Units []ItemReview `json:"units,omitempty"`
	// Modules are the cloud-init modules (runcmd, bootcmd, yum_repos, ...)
	// added, removed or changed.
	// +optional
	// +listType=atomic
	Modules []ItemReview `json:"modules,omitempty"`
}

// PayloadReview compares the sizes of one payload.
type PayloadReview struct {
	// SizeBefore is the payload's size now, in bytes (0: it has none).
	SizeBefore int64 `json:"sizeBefore"`
	// SizeAfter is its size with the candidate (0: it would have none).
	SizeAfter int64 `json:"sizeAfter"`
	// UserDataLimit is the cloud's user-data limit a bootstrap payload must
	// fit; 0 when there is none or it is not known.
	// +optional
	UserDataLimit int64 `json:"userDataLimit,omitempty"`
	// OverLimit says the payload would exceed the cloud's limit: the cloud
	// would refuse new machines.
	// +optional
	OverLimit bool `json:"overLimit,omitempty"`
}

// ItemChange says how an item changes.
type ItemChange string

// Item changes.
const (
	ItemAdded   ItemChange = "Added"
	ItemRemoved ItemChange = "Removed"
	ItemChanged ItemChange = "Changed"
)

// ItemReview is one file, unit or module that changes.
type ItemReview struct {
	// Config is bootstrap or provisioning.
	Config string `json:"config"`
	// Name is a file's path, a unit's name (unit/drop-in for a drop-in) or a
	// module's name.
	Name string `json:"name"`
	// Change is Added, Removed or Changed.
	Change ItemChange `json:"change"`
	// Diff is a unified diff of the item's content (and, for a file, its
	// permissions and encoding).
	// +optional
	Diff string `json:"diff,omitempty"`
}
