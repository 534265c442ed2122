// Package v1alpha1 is version v1alpha1 of the osm.k8c.io API.
//
// +k8s:deepcopy-gen=package
// +k8s:conversion-gen=github.com/osm-apiserver/osm-apiserver/pkg/apis/osm
// +k8s:defaulter-gen=TypeMeta
// +k8s:openapi-gen=true
// +groupName=osm.k8c.io
package v1alpha1
