package bootreport

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
)

var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the report: the machine's."},
	{Name: "Machine Deployment", Type: "string", Description: "The machine's MachineDeployment."},
	{Name: "Step", Type: "string", Description: "The step running, or the last one that ended."},
	{Name: "State", Type: "string", Description: "Provisioning, Succeeded or Failed."},
	{Name: "Revision", Type: "string", Description: "The MachineDeployment revision the machine was provisioned with."},
	{Name: "Elapsed", Type: "string", Description: "Time from the boot's first step to its end, or until now while provisioning."},
	{Name: "Age", Type: "string", Description: "Age of the report."},
	{Name: "Message", Type: "string", Description: "What happened last: the failed step, its exit code and first error line."},
	{Name: "Profile", Type: "string", Priority: 1, Description: "The OperatingSystemProfile and its version the machine was provisioned from."},
}

// ConvertToTable implements rest.TableConvertor.
func (r *REST) ConvertToTable(_ context.Context, object runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	// One now for all the rows: the elapsed times of a list compare.
	now := time.Now()
	return registry.ConvertToTable(resource, columns, object, items,
		func(br *osm.BootReport) metav1.TableRow { return row(br, now) })
}

func items(l *osm.BootReportList) []osm.BootReport { return l.Items }

func row(r *osm.BootReport, now time.Time) metav1.TableRow {
	return metav1.TableRow{
		Cells: []any{
			r.Name,
			r.Spec.MachineDeployment,
			orDash(r.Status.Step),
			orDash(string(r.Status.State)),
			orDash(r.Spec.MachineDeploymentRevision),
			elapsed(&r.Status, now),
			registry.Age(r.CreationTimestamp),
			registry.Short(r.Status.Message),
			profile(r.Spec.Profile),
		},
		Object: runtime.RawExtension{Object: r},
	}
}

// elapsed is the time from the boot's first record to its end, or to now
// while it provisions.
func elapsed(st *osm.BootReportStatus, now time.Time) string {
	if st.StartTime == nil {
		return "-"
	}
	end := now
	if st.CompletionTime != nil {
		end = st.CompletionTime.Time
	}
	return duration.HumanDuration(end.Sub(st.StartTime.Time))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// profile is "name version", "-" for none.
func profile(p osm.ProfileReference) string {
	switch {
	case p.Name == "":
		return "-"
	case p.Version == "":
		return p.Name
	}
	return p.Name + " " + p.Version
}
