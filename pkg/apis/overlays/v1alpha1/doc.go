// Package v1alpha1 holds the OperatingSystemProfileOverlay type of group
// overlays.osm.k8c.io: a custom resource, stored by kube-apiserver, that adds
// to or replaces parts of the OperatingSystemProfiles it names for the
// MachineDeployments it selects. It has a group of its own because
// osm.k8c.io/v1alpha1 is served by osm-apiserver's APIService as a whole.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +groupName=overlays.osm.k8c.io
package v1alpha1
