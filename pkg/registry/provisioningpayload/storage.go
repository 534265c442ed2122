// Package provisioningpayload serves ProvisioningPayloads: the bootstrap and
// provisioning user-data of every MachineDeployment that has them, exactly
// as the Secrets machine-controller reads hold them. It is a resource apart from
// operatingsystemconfigs so that RBAC can show configs without the tokens inside
// payloads.
package provisioningpayload

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

// REST is the storage of provisioningpayloads. Names are
// <machinedeployment>-bootstrap and <machinedeployment>-provisioning. An MD
// whose render is pending or failed has no payloads: a GET answers 503 or 500
// with the reason (the MD's OperatingSystemConfig shows it too), a LIST leaves
// them out.
type REST struct {
	*registry.Store
}

var (
	_ rest.Getter         = &REST{}
	_ rest.Lister         = &REST{}
	_ rest.Watcher        = &REST{}
	_ rest.TableConvertor = &REST{}
)

// NewREST returns the storage reading MDs from mds, their outputs from
// resolver and changes from feed.
func NewREST(mds machines.Lister, resolver resolve.Interface, feed *changefeed.Feed) *REST {
	return &REST{&registry.Store{
		Resource:           osm.Resource(registry.ProvisioningPayloads),
		SingularName:       "provisioningpayload",
		NewFunc:            func() runtime.Object { return &osm.ProvisioningPayload{} },
		NewListFunc:        func() runtime.Object { return &osm.ProvisioningPayloadList{} },
		Objects:            objects{},
		MachineDeployments: mds,
		Resolver:           resolver,
		Feed:               feed,
	}}
}
