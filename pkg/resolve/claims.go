package resolve

import (
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// SecretClaims says whether a MachineDeployment can have the Secrets
// machine-controller reads for it: their names fit, and no other MD owns them
// (a *machinecontroller.ConflictError). *machines.Claims implements it.
type SecretClaims interface {
	Check(md *clusterv1alpha1.MachineDeployment) error
}

// SecretLimitError says that a payload is larger than a Secret can hold, so
// the syncer cannot write it.
type SecretLimitError struct {
	Kind  osm.PayloadType
	Size  int
	Limit int
}

func (e *SecretLimitError) Error() string {
	return fmt.Sprintf("the %s payload is %d bytes (%s), more than the %s a Secret can hold",
		e.Kind, e.Size, resource.NewQuantity(int64(e.Size), resource.BinarySI), resource.NewQuantity(int64(e.Limit), resource.BinarySI))
}

// fitsSecrets fails when a payload of res does not fit its Secret.
func fitsSecrets(res *render.Result) error {
	payloads := []struct {
		kind osm.PayloadType
		p    *render.Payload
	}{{osm.PayloadTypeBootstrap, &res.Bootstrap}, {osm.PayloadTypeProvisioning, &res.Provisioning}, {osm.PayloadTypeEdgeScript, res.EdgeScript}}
	for _, p := range payloads {
		if p.p != nil && len(p.p.UserData) > machinecontroller.MaxSecretSize {
			return &SecretLimitError{Kind: p.kind, Size: len(p.p.UserData), Limit: machinecontroller.MaxSecretSize}
		}
	}
	return nil
}
