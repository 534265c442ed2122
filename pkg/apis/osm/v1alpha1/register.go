package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group served by osm-apiserver.
const GroupName = "osm.k8c.io"

// SchemeGroupVersion is the group version used to register these objects.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// Resource takes an unqualified resource and returns a group-qualified GroupResource.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder registers the types of this group version.
	SchemeBuilder      = runtime.NewSchemeBuilder(addKnownTypes)
	localSchemeBuilder = &SchemeBuilder
	// AddToScheme adds the types of this group version to a scheme.
	AddToScheme = localSchemeBuilder.AddToScheme
)

func init() {
	// Generated conversion and defaulting functions register themselves here.
	localSchemeBuilder.Register(RegisterDefaults)
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&OperatingSystemConfig{},
		&OperatingSystemConfigList{},
		&ProvisioningPayload{},
		&ProvisioningPayloadList{},
		&BootReport{},
		&BootReportList{},
		&BootStep{},
		&MachineJoin{},
		&ProfileReview{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
