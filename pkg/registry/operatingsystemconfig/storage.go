// Package operatingsystemconfig serves OperatingSystemConfigs: one virtual,
// read-only object per MachineDeployment (its profile named or defaulted), rendered on
// request from the informer caches (and the render cache).
package operatingsystemconfig

import (
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

// REST is the storage of operatingsystemconfigs.
type REST struct {
	*registry.Store
}

var (
	_ rest.Getter             = &REST{}
	_ rest.Lister             = &REST{}
	_ rest.Watcher            = &REST{}
	_ rest.TableConvertor     = &REST{}
	_ rest.ShortNamesProvider = &REST{}
)

// Machines counts the boot reports of a MachineDeployment's machines.
type Machines interface {
	// Summary returns the counts, nil when no machine reported.
	Summary(md *clusterv1alpha1.MachineDeployment) *osm.MachineSummary
}

// NewREST returns the storage reading MDs from mds, their outputs from
// resolver, changes from feed and, unless nil, the summaries of their
// machines' boot reports from machines.
func NewREST(mds machines.Lister, resolver resolve.Interface, feed *changefeed.Feed, machines Machines) *REST {
	return &REST{&registry.Store{
		Resource:           osm.Resource(registry.OperatingSystemConfigs),
		SingularName:       "operatingsystemconfig",
		NewFunc:            func() runtime.Object { return &osm.OperatingSystemConfig{} },
		NewListFunc:        func() runtime.Object { return &osm.OperatingSystemConfigList{} },
		Objects:            objects{machines: machines},
		MachineDeployments: mds,
		Resolver:           resolver,
		Feed:               feed,
		ReadsMachines:      machines != nil,
	}}
}

// ShortNames implements rest.ShortNamesProvider.
func (r *REST) ShortNames() []string {
	return []string{"osc"}
}

// objects: an MD's OSC has the MD's name and always exists; a failed render is
// shown in its status.
type objects struct {
	machines Machines
}

func (objects) Names(md *clusterv1alpha1.MachineDeployment) []string { return []string{md.Name} }

func (objects) MachineDeployment(name string) (string, bool) { return name, true }

func (o objects) Object(md *clusterv1alpha1.MachineDeployment, out *resolve.Rendered, _, rv string) (runtime.Object, error) {
	osc := newObject(md, out, rv)
	if o.machines != nil {
		osc.Status.Machines = o.machines.Summary(md)
	}
	return osc, nil
}

// SummaryObject implements registry.SummaryObjects: the OSC with only the
// spec fields its table shows, for `kubectl get osc` (the rows carry object
// metadata only), without unpacking the config.
func (o objects) SummaryObject(md *clusterv1alpha1.MachineDeployment, out *resolve.Rendered, _, rv string) (runtime.Object, error) {
	osc := buildObject(md, out, out.Summary(), nil, rv)
	if o.machines != nil {
		osc.Status.Machines = o.machines.Summary(md)
	}
	return osc, nil
}

func (objects) Stub(md *clusterv1alpha1.MachineDeployment, name, rv string) runtime.Object {
	return &osm.OperatingSystemConfig{ObjectMeta: registry.ObjectMeta(md, name, rv)}
}

func (objects) List(objs []runtime.Object) runtime.Object {
	list := &osm.OperatingSystemConfigList{Items: make([]osm.OperatingSystemConfig, len(objs))}
	for i, obj := range objs {
		list.Items[i] = *obj.(*osm.OperatingSystemConfig)
	}
	return list
}

// newObject builds the OSC of md from its output.
func newObject(md *clusterv1alpha1.MachineDeployment, out *resolve.Rendered, rv string) *osm.OperatingSystemConfig {
	spec, err := out.Config()
	if err != nil {
		// Not the MD's fault, but the OSC is where its state is shown.
		klog.ErrorS(err, "Failed to read a rendered config", "machineDeployment", klog.KObj(md))
		spec = &osm.OperatingSystemConfigSpec{}
	}
	return buildObject(md, out, spec, err, rv)
}

// buildObject builds the OSC of md from its output and spec; readErr is why
// the spec could not be read.
func buildObject(md *clusterv1alpha1.MachineDeployment, out *resolve.Rendered, spec *osm.OperatingSystemConfigSpec, readErr error, rv string) *osm.OperatingSystemConfig {
	renderErr := out.Err
	if readErr != nil {
		renderErr = readErr
	}
	if renderErr == nil && out.ViewErr != nil {
		renderErr = fmt.Errorf("the payloads rendered, but this view of them (secrets replaced by placeholders) did not: %w", out.ViewErr)
	}
	pending, ok := out.Pending()
	if ok {
		// Not an error: the config renders as soon as what it waits for is there.
		renderErr = nil
	}
	if pending == "" {
		pending = out.Waiting
	}
	return &osm.OperatingSystemConfig{
		ObjectMeta: registry.ObjectMeta(md, md.Name, rv),
		Spec:       *spec,
		Status: osm.OperatingSystemConfigStatus{
			Profile:                   out.Profile,
			MachineDeploymentRevision: md.Annotations[machinecontroller.AnnotationMDRevision],
			// The view's payloads: the real ones' sizes would tell the
			// lengths of the secrets in them, which OSC readers may not read.
			BootstrapPayloadSize:    out.ViewBootstrap.Size,
			ProvisioningPayloadSize: out.ViewProvisioning.Size,
			RenderError:             registry.ErrorMessage(renderErr),
			Pending:                 pending,
			NodeJoin:                resolve.NodeJoinStatus(out.NodeJoin),
			APIServer:               out.APIServer,
			Overlays:                out.Overlays,
		},
	}
}
