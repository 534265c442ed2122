package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"

	"github.com/spf13/cobra"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/osm-apiserver/osm-apiserver/cmd/osm-apiserver/app/options"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/install"
	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	overlaylisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/overlays"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// renderOptions are the flags of `osm-apiserver render`.
type renderOptions struct {
	osp               string
	overlays          []string
	machineDeployment string
	output            string
	namespace         string
	diff              diffOptions
	node              *options.NodeFlags
	cluster           options.ClusterFlags
}

func newRenderCommand() *cobra.Command {
	o := &renderOptions{output: "osc", namespace: metav1.NamespaceSystem, node: options.NewNodeFlags()}
	// Offline there is no Secret to read: the flag names a manifest file.
	o.node.RegistryCredentialsFromFile = true
	cmd := &cobra.Command{
		Use:   "render --osp FILE [--overlay FILE]... --machinedeployment FILE [--diff] [flags]",
		Short: "Render one OperatingSystemProfile (and its overlays) against one MachineDeployment, offline",
		Long: `Render one OperatingSystemProfile, extended by the overlays given that apply to the
MachineDeployment, against one MachineDeployment from files, with the same node
and cluster flags as the server, and print the OperatingSystemConfig (--output
osc, YAML) or the raw bootstrap or provisioning user-data.

With --diff, compare that render with a base one (--base-osp, default the same
--osp, with the --base-overlay files, default none) as a ProfileReview would:
whether the payloads change, the files, units and modules added, removed or
changed with unified diffs of the view (secrets are placeholders), and the
payloads' sizes against the cloud's user-data limit. It exits 0 when the
payloads are the same, 1 when they differ and 2 when a render fails or the
input is wrong, as diff(1) does: for an OSP repository's CI.

Examples:
  osm-apiserver render --osp osp-ubuntu.yaml --machinedeployment md.yaml \
    --cluster-info-kubeconfig cluster-info.kubeconfig \
    --bootstrap-token abcdef.0123456789abcdef --cloud-init-getter-token TOKEN \
    --output provisioning
  osm-apiserver render --diff --osp osp-ubuntu.yaml --overlay company-ca.yaml ...   # the OSP vs the OSP + overlay
  osm-apiserver render --diff --base-osp main/osp.yaml --osp osp.yaml ...           # two versions of an OSP`,
		Args: cobra.NoArgs,
		// Errors are printed as one plain line: keep the root's log setup out.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.diff.enabled {
				return o.runDiff(cmd)
			}
			out, err := o.run(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.osp, "osp", o.osp, "OperatingSystemProfile manifest (YAML or JSON).")
	fs.StringVar(&o.machineDeployment, "machinedeployment", o.machineDeployment, "MachineDeployment manifest (YAML or JSON).")
	fs.StringArrayVar(&o.overlays, "overlay", nil, "OperatingSystemProfileOverlay manifest, repeatable: applied, in the server's order, when it applies to the MachineDeployment.")
	fs.StringVar(&o.namespace, "namespace", o.namespace, "osm-apiserver's namespace: its overlays may reach MachineDeployments of every namespace.")
	fs.StringVar(&o.output, "output", o.output, "What to print: osc (the OperatingSystemConfig as YAML), bootstrap or provisioning (raw user-data); with --diff, text or yaml (a ProfileReview).")
	o.diff.addFlags(fs)
	o.node.AddFlags(fs)
	o.cluster.AddFlags(fs)
	o.cluster.AddTokenFlags(fs)
	return cmd
}

// run renders and returns what to print; notes about overlays go to notes.
func (o *renderOptions) run(notes io.Writer) ([]byte, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	switch o.output {
	case "osc", "bootstrap", "provisioning":
	default:
		return nil, fmt.Errorf("--output: %q is not osc, bootstrap or provisioning", o.output)
	}
	in, err := o.inputs()
	if err != nil {
		return nil, err
	}
	if in.OSP, err = decodeFile(o.osp, render.DecodeOSP); err != nil {
		return nil, err
	}
	if in.Overlays, err = o.applicable(in.MachineDeployment, o.overlays, notes); err != nil {
		return nil, err
	}
	r := render.NewRenderer()
	res, err := r.Render(in)
	if err != nil {
		return nil, err
	}
	switch o.output {
	case "bootstrap":
		return res.Bootstrap.UserData, nil
	case "provisioning":
		return res.Provisioning.UserData, nil
	}
	// The OSC's spec is the server's view: rendered from placeholders for secrets.
	in.View = true
	view, err := r.Render(in)
	if err != nil {
		return nil, err
	}
	return oscYAML(in, view.Config, res)
}

// validate checks the flags every render needs.
func (o *renderOptions) validate() error {
	for _, f := range []struct{ name, value string }{
		{"--osp", o.osp},
		{"--machinedeployment", o.machineDeployment},
		{"--cluster-info-kubeconfig", o.cluster.ClusterInfoKubeconfig},
		{"--bootstrap-token", o.cluster.BootstrapToken},
		{"--cloud-init-getter-token", o.cluster.CloudInitGetterToken},
	} {
		if f.value == "" {
			return fmt.Errorf("%s is required", f.name)
		}
	}
	return nil
}

// inputs reads the node and cluster flags and the MachineDeployment.
func (o *renderOptions) inputs() (render.Input, error) {
	var in render.Input
	var err error
	if in.Node, err = o.node.NodeOptions(); err != nil {
		return in, err
	}
	if in.Cluster, err = o.cluster.ClusterInfo(); err != nil {
		return in, err
	}
	in.MachineDeployment, err = decodeFile(o.machineDeployment, render.DecodeMachineDeployment)
	return in, err
}

// applicable reads the overlay files and returns those that apply to md, in
// the order the server applies them; each that does not is noted.
func (o *renderOptions) applicable(md *clusterv1alpha1.MachineDeployment, files []string, notes io.Writer) ([]*overlaysv1alpha1.OperatingSystemProfileOverlay, error) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, path := range files {
		ov, err := decodeFile(path, render.DecodeOverlay)
		if err != nil {
			return nil, err
		}
		if ov.Namespace == "" {
			return nil, fmt.Errorf("%s: metadata.namespace is required: it decides which MachineDeployments the overlay reaches", path)
		}
		if err := indexer.Add(ov); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	sel := &overlays.Selector{ServerNamespace: o.namespace, Overlays: overlaylisters.NewOperatingSystemProfileOverlayLister(indexer)}
	applied, err := sel.For(md)
	if err != nil {
		return nil, err
	}
	for _, obj := range indexer.List() {
		ov := obj.(*overlaysv1alpha1.OperatingSystemProfileOverlay)
		if !slices.Contains(applied, ov) {
			_, _ = fmt.Fprintf(notes, "overlay %s/%s does not apply to machinedeployment %s/%s: not applied\n", ov.Namespace, ov.Name, md.Namespace, md.Name)
		}
	}
	return applied, nil
}

func decodeFile[T any](path string, decode func([]byte) (T, error)) (T, error) {
	var zero T
	data, err := os.ReadFile(path)
	if err != nil {
		return zero, err
	}
	v, err := decode(data)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// oscYAML is the OperatingSystemConfig the server would serve for the render,
// as osm.k8c.io/v1alpha1 YAML.
func oscYAML(in render.Input, spec osm.OperatingSystemConfigSpec, res *render.Result) ([]byte, error) {
	md := in.MachineDeployment
	osc := &osm.OperatingSystemConfig{
		ObjectMeta: metav1.ObjectMeta{Name: md.Name, Namespace: md.Namespace},
		Spec:       spec,
		Status: osm.OperatingSystemConfigStatus{
			Profile:                   osm.ProfileReference{Namespace: in.OSP.Namespace, Name: in.OSP.Name, Version: in.OSP.Spec.Version},
			Overlays:                  overlayRefs(in.Overlays),
			MachineDeploymentRevision: md.Annotations[machinecontroller.AnnotationMDRevision],
			BootstrapPayloadSize:      int64(len(res.Bootstrap.UserData)),
			ProvisioningPayloadSize:   int64(len(res.Provisioning.UserData)),
		},
	}
	scheme := runtime.NewScheme()
	install.Install(scheme)
	out := &osmv1alpha1.OperatingSystemConfig{}
	if err := scheme.Convert(osc, out, nil); err != nil {
		return nil, fmt.Errorf("converting the OperatingSystemConfig: %w", err)
	}
	out.APIVersion, out.Kind = osmv1alpha1.SchemeGroupVersion.String(), "OperatingSystemConfig"
	data, err := yaml.Marshal(out)
	if err != nil {
		return nil, errors.New("marshalling the OperatingSystemConfig: " + err.Error())
	}
	return data, nil
}
