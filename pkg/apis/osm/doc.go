// Package osm is the internal version of the osm.k8c.io API: the virtual,
// read-only OperatingSystemConfig and ProvisioningPayload resources, and
// MachineJoin, the create-only request of a booting node.
//
// +k8s:deepcopy-gen=package
// +groupName=osm.k8c.io
package osm
