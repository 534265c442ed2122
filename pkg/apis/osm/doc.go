// Package osm is the internal version of the osm.k8c.io API: the virtual,
// read-only OperatingSystemConfig and ProvisioningPayload resources,
// MachineJoin, the create-only request of a booting node, and the BootReports
// nodes write through their step subresource.
//
// +k8s:deepcopy-gen=package
// +groupName=osm.k8c.io
package osm
