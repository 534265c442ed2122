package provisioningpayload

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
)

var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the payload: <machinedeployment>-bootstrap or -provisioning."},
	{Name: "MachineDeployment", Type: "string", Description: "MachineDeployment the payload belongs to."},
	{Name: "Type", Type: "string", Description: "bootstrap or provisioning."},
	{Name: "Format", Type: "string", Description: "cloud-init or ignition."},
	{Name: "Size", Type: "string", Description: "Size of the user-data."},
	{Name: "Limit", Type: "string", Description: "The cloud's user-data size limit, for bootstrap payloads; - when unknown."},
	{Name: "Fits", Type: "string", Description: "Whether a bootstrap payload fits the cloud's limit; n/a for provisioning payloads, which nodes fetch from their Secret."},
	{Name: "Age", Type: "string", Description: "Age of the MachineDeployment."},
}

// ConvertToTable implements rest.TableConvertor.
func (r *REST) ConvertToTable(_ context.Context, object runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	return registry.ConvertToTable(r.Resource, columns, object, items, row)
}

func items(l *osm.ProvisioningPayloadList) []osm.ProvisioningPayload { return l.Items }

func row(p *osm.ProvisioningPayload) metav1.TableRow {
	limit, fits := "-", "unknown"
	if p.Spec.Type != osm.PayloadTypeBootstrap {
		// Fetched from its Secret, not passed as user-data.
		fits = "n/a"
	}
	if l := p.Spec.UserDataLimit; l > 0 {
		limit = registry.Bytes(l)
		fits = "Yes"
		if p.Spec.Size > l {
			fits = "No"
		}
	}
	return metav1.TableRow{
		Cells: []any{
			p.Name,
			p.Spec.MachineDeployment,
			string(p.Spec.Type),
			string(p.Spec.Format),
			registry.Bytes(p.Spec.Size),
			limit,
			fits,
			registry.Age(p.CreationTimestamp),
		},
		Object: runtime.RawExtension{Object: p},
	}
}
