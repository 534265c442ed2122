package profilereview

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
)

var columns = []metav1.TableColumnDefinition{
	{Name: "Namespace", Type: "string", Description: "Namespace of the MachineDeployment."},
	{Name: "MachineDeployment", Type: "string", Description: "MachineDeployment the candidate reaches."},
	{Name: "Changed", Type: "string", Description: "Whether its payloads would change."},
	{Name: "Files", Type: "string", Description: "Files added, changed and removed (+a ~c -r)."},
	{Name: "Units", Type: "string", Description: "Units and drop-ins added, changed and removed."},
	{Name: "Modules", Type: "string", Description: "Cloud-init modules added, changed and removed."},
	{Name: "Bootstrap", Type: "string", Description: "Size of the bootstrap payload before and after, and the cloud's user-data limit."},
	{Name: "Status", Type: "string", Description: "OK, the render error the candidate would cause, or what the render waits for."},
}

// ConvertToTable implements rest.TableConvertor: one row per
// MachineDeployment the review answers for.
func (r *REST) ConvertToTable(_ context.Context, object runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	return registry.ObjectTable(resource, columns, object, rows)
}

func rows(pr *osm.ProfileReview) []metav1.TableRow {
	rows := make([]metav1.TableRow, 0, len(pr.Status.MachineDeployments))
	for i := range pr.Status.MachineDeployments {
		m := &pr.Status.MachineDeployments[i]
		status := "OK"
		switch {
		case m.Pending != "":
			status = "Pending: " + registry.Short(m.Pending)
		case m.Error != "":
			status = "Error: " + registry.Short(m.Error)
		}
		rows = append(rows, metav1.TableRow{
			Cells: []any{m.Namespace, m.Name, fmt.Sprint(m.Changed), counts(m.Files), counts(m.Units), counts(m.Modules), bootstrap(&m.Bootstrap), status},
			// A row stands for an MD, not for an object of its own.
			Object: runtime.RawExtension{Object: pr},
		})
	}
	return rows
}

func counts(items []osm.ItemReview) string {
	var added, changed, removed int
	for _, it := range items {
		switch it.Change {
		case osm.ItemAdded:
			added++
		case osm.ItemChanged:
			changed++
		case osm.ItemRemoved:
			removed++
		}
	}
	return fmt.Sprintf("+%d ~%d -%d", added, changed, removed)
}

func bootstrap(p *osm.PayloadReview) string {
	s := registry.Bytes(p.SizeBefore) + " -> " + registry.Bytes(p.SizeAfter)
	if p.UserDataLimit > 0 {
		s += " / " + registry.Bytes(p.UserDataLimit)
	}
	if p.OverLimit {
		s += " (over the limit)"
	}
	return s
}
