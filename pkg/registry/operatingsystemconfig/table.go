package operatingsystemconfig

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
)

var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the OperatingSystemConfig, the same as its MachineDeployment's."},
	{Name: "OS", Type: "string", Description: "Operating system."},
	{Name: "OS Version", Type: "string", Description: "Version of the operating system."},
	{Name: "Cloud", Type: "string", Description: "Cloud provider of the MachineDeployment."},
	{Name: "Profile", Type: "string", Description: "OperatingSystemProfile and its version, as name@version; \"(default)\" when the MachineDeployment names none and gets its operating system's default."},
	{Name: "Utility", Type: "string", Description: "Provisioning utility: cloud-init or ignition."},
	{Name: "Bootstrap", Type: "string", Description: "Size of the bootstrap user-data."},
	{Name: "Provisioning", Type: "string", Description: "Size of the provisioning user-data."},
	{Name: "Machines", Type: "string", Description: "Boot reports of the MachineDeployment's machines: provisioned with its current revision, with an older one, failed, under way."},
	{Name: "Status", Type: "string", Description: "Rendered, Pending and what the config waits for, or the render error."},
	{Name: "Overlays", Type: "string", Description: "OperatingSystemProfileOverlays that shaped the config, in the order applied (namespace/ for those of another namespace); - for none."},
	{Name: "Age", Type: "string", Description: "Age of the MachineDeployment."},
	{Name: "Join", Type: "string", Priority: 1, Description: "How nodes get their kubelet credentials: MachineJoin, or Compatibility (they read the MachineDeployment's Secrets)."},
	{Name: "API Server", Type: "string", Priority: 1, Description: "API server URL nodes are given and, in parentheses, where it came from: cluster-info, flag, kubernetes-endpoints or kubeconfig."},
}

// ConvertToTable implements rest.TableConvertor.
func (r *REST) ConvertToTable(_ context.Context, object runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	return registry.ConvertToTable(r.Resource, columns, object, items, row)
}

func items(l *osm.OperatingSystemConfigList) []osm.OperatingSystemConfig { return l.Items }

func row(osc *osm.OperatingSystemConfig) metav1.TableRow {
	status := "Rendered"
	profile := osc.Status.Profile.Name
	if osc.Status.Profile.Version != "" {
		profile += "@" + osc.Status.Profile.Version
	}
	if osc.Status.Profile.Defaulted {
		profile += " (default)"
	}
	bootstrap, provisioning, join, apiServer := "-", "-", "-", "-"
	if osc.Status.NodeJoin != nil {
		join = string(osc.Status.NodeJoin.Mode)
	}
	if s := osc.Status.APIServer; s != nil {
		apiServer = s.URL
		if s.Source != "" {
			apiServer += " (" + string(s.Source) + ")"
		}
	}
	switch {
	case osc.Status.RenderError != "":
		status = "Error: " + registry.Short(osc.Status.RenderError)
	case osc.Status.Pending != "":
		status = "Pending: " + registry.Short(osc.Status.Pending)
	}
	// A config that waits for the MD's next revision has the payloads of
	// the current one.
	if osc.Status.RenderError == "" && osc.Status.BootstrapPayloadSize > 0 {
		bootstrap = registry.Bytes(osc.Status.BootstrapPayloadSize)
		provisioning = registry.Bytes(osc.Status.ProvisioningPayloadSize)
	}
	return metav1.TableRow{
		Cells: []any{
			osc.Name,
			osc.Spec.OSName,
			osc.Spec.OSVersion,
			osc.Spec.CloudProvider.Name,
			profile,
			osc.Spec.ProvisioningUtility,
			bootstrap,
			provisioning,
			machinesCell(osc.Status.Machines),
			status,
			overlayNames(osc),
			registry.Age(osc.CreationTimestamp),
			join,
			apiServer,
		},
		Object: runtime.RawExtension{Object: osc},
	}
}

// machinesCell formats a machine summary for a table cell: "3 current, 1
// older, 1 failed, 2 provisioning", leaving out what is zero.
func machinesCell(m *osm.MachineSummary) string {
	if m == nil {
		return "-"
	}
	var parts []string
	for _, p := range []struct {
		n    int32
		word string
	}{{m.Current, "current"}, {m.Older, "older"}, {m.Failed, "failed"}, {m.Provisioning, "provisioning"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.word))
		}
	}
	return strings.Join(parts, ", ")
}

// overlayNames are the overlays of an OSC for a table cell: the names of
// those of the MD's namespace, namespace/name of the others.
func overlayNames(osc *osm.OperatingSystemConfig) string {
	if len(osc.Status.Overlays) == 0 {
		return "-"
	}
	names := make([]string, len(osc.Status.Overlays))
	for i, o := range osc.Status.Overlays {
		names[i] = o.Name
		if o.Namespace != osc.Namespace {
			names[i] = o.Namespace + "/" + o.Name
		}
	}
	return registry.Short(strings.Join(names, ","))
}
