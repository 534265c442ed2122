package provisioningpayload

import (
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// UserDataLimit returns the user-data size limit of a cloud provider, 0 if unknown.
func UserDataLimit(cloudProvider string) int64 {
	return machinecontroller.UserDataLimit(cloudProvider)
}

// userDataLimit is the limit a payload must fit. Only the bootstrap payload is
// passed to the cloud as user-data; the node fetches the provisioning payload
// from its Secret, so no cloud limit applies to it.
func userDataLimit(kind osm.PayloadType, cloudProvider string) int64 {
	if kind != osm.PayloadTypeBootstrap {
		return 0
	}
	return UserDataLimit(cloudProvider)
}
