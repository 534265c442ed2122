// Package v1alpha1 holds the OperatingSystemProfile type of group
// operatingsystemmanager.k8c.io, field-for-field compatible with the upstream
// Operating System Manager CRD so that existing profiles apply unchanged.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +groupName=operatingsystemmanager.k8c.io
package v1alpha1
