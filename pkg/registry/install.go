// Package registry holds what the REST storages of osm.k8c.io share: the scheme,
// Build for the API group, the interface to the renderer, list filtering and
// watches driven by the change feed.
package registry

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/install"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
)

var (
	// Scheme holds the types served by osm-apiserver.
	Scheme = runtime.NewScheme()
	// Codecs serialize the types of Scheme.
	Codecs = serializer.NewCodecFactory(Scheme)
)

func init() {
	install.Install(Scheme)
	// The generic server decodes options such as ListOptions and GetOptions as v1.
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	Scheme.AddUnversionedTypes(unversioned,
		&metav1.Status{},
		&metav1.APIVersions{},
		&metav1.APIGroupList{},
		&metav1.APIGroup{},
		&metav1.APIResourceList{},
	)
}

// Resource names in osm.k8c.io/v1alpha1.
const (
	OperatingSystemConfigs = "operatingsystemconfigs"
	ProvisioningPayloads   = "provisioningpayloads"
	MachineJoins           = "machinejoins"
	ProfileReviews         = "profilereviews"
	BootReports            = "bootreports"
	// BootReportSteps is the subresource nodes post their step records to.
	BootReportSteps = BootReports + "/step"
)

// Storages are the storages of osm.k8c.io/v1alpha1.
type Storages struct {
	Configs, Payloads rest.Storage
	// MachineJoins and ProfileReviews: create-only requests; nil leaves one out.
	MachineJoins, ProfileReviews rest.Storage
	// BootReports and BootReportSteps: the reports and their step subresource.
	BootReports, BootReportSteps rest.Storage
}

// Build returns the APIGroupInfo of osm.k8c.io serving the given storages; the
// caller installs it with GenericAPIServer.InstallAPIGroup.
func Build(s Storages) genericapiserver.APIGroupInfo {
	info := genericapiserver.NewDefaultAPIGroupInfo(osm.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	storages := map[string]rest.Storage{}
	for name, st := range map[string]rest.Storage{
		OperatingSystemConfigs: s.Configs,
		ProvisioningPayloads:   s.Payloads,
		MachineJoins:           s.MachineJoins,
		ProfileReviews:         s.ProfileReviews,
		BootReports:            s.BootReports,
		BootReportSteps:        s.BootReportSteps,
	} {
		if st != nil {
			storages[name] = st
		}
	}
	info.VersionedResourcesStorageMap[v1alpha1.SchemeGroupVersion.Version] = storages
	return info
}
