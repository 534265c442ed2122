package osm

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ProfileReview previews a change of an OperatingSystemProfile or an
// OperatingSystemProfileOverlay: created with the candidate, it answers
// what would change for every MachineDeployment the caller may read.
// Nothing is stored.
type ProfileReview struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	Spec   ProfileReviewSpec
	Status ProfileReviewStatus
}

// ProfileReviewSpec holds the candidate.
type ProfileReviewSpec struct {
	OperatingSystemProfile    *ospv1alpha1.OperatingSystemProfile
	Overlay                   *overlaysv1alpha1.OperatingSystemProfileOverlay
	Namespace                 string
	MachineDeploymentSelector *metav1.LabelSelector
}

// ProfileReviewStatus is the answer.
type ProfileReviewStatus struct {
	Reviewed           int32
	Changed            int32
	Failed             int32
	MachineDeployments []MachineDeploymentReview
}

// MachineDeploymentReview is what a candidate changes for one MachineDeployment.
type MachineDeploymentReview struct {
	Namespace     string
	Name          string
	Changed       bool
	Error         string
	PreviousError string
	Pending       string
	Overlays      []OverlayReference
	Bootstrap     PayloadReview
	Provisioning  PayloadReview
	Files         []ItemReview
	Units         []ItemReview
	Modules       []ItemReview
}

// PayloadReview compares the sizes of one payload.
type PayloadReview struct {
	SizeBefore    int64
	SizeAfter     int64
	UserDataLimit int64
	OverLimit     bool
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
	Config string
	Name   string
	Change ItemChange
	Diff   string
}
