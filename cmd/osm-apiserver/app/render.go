package app

import (
	"errors"
	"fmt"
	"os"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/install"
	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/options"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// renderOptions are the flags of `osm-apiserver render`.
type renderOptions struct {
	osp               string
	machineDeployment string
	output            string
	node              *options.NodeFlags
	cluster           options.ClusterFlags
}

func newRenderCommand() *cobra.Command {
	o := &renderOptions{output: "osc", node: options.NewNodeFlags()}
	// Offline there is no Secret to read: the flag names a manifest file.
	o.node.RegistryCredentialsFromFile = true
	cmd := &cobra.Command{
		Use:   "render --osp FILE --machinedeployment FILE [flags]",
		Short: "Render one OperatingSystemProfile against one MachineDeployment, offline",
		Long: `Render one OperatingSystemProfile against one MachineDeployment from files, with the
same node and cluster flags as the server, and print the OperatingSystemConfig
(--output osc, YAML) or the raw bootstrap or provisioning user-data.

Example:
  osm-apiserver render --osp osp-ubuntu.yaml --machinedeployment md.yaml \
    --cluster-info-kubeconfig cluster-info.kubeconfig \
    --bootstrap-token abcdef.0123456789abcdef --cloud-init-getter-token TOKEN \
    --output provisioning`,
		Args: cobra.NoArgs,
		// Errors are printed as one plain line: keep the root's log setup out.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := o.run()
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
	fs.StringVar(&o.output, "output", o.output, "What to print: osc (the OperatingSystemConfig as YAML), bootstrap or provisioning (raw user-data).")
	o.node.AddFlags(fs)
	o.cluster.AddFlags(fs)
	o.cluster.AddTokenFlags(fs)
	return cmd
}

// run renders and returns what to print.
func (o *renderOptions) run() ([]byte, error) {
	for _, f := range []struct{ name, value string }{
		{"--osp", o.osp},
		{"--machinedeployment", o.machineDeployment},
		{"--cluster-info-kubeconfig", o.cluster.ClusterInfoKubeconfig},
		{"--bootstrap-token", o.cluster.BootstrapToken},
		{"--cloud-init-getter-token", o.cluster.CloudInitGetterToken},
	} {
		if f.value == "" {
			return nil, fmt.Errorf("%s is required", f.name)
		}
	}
	switch o.output {
	case "osc", "bootstrap", "provisioning":
	default:
		return nil, fmt.Errorf("--output: %q is not osc, bootstrap or provisioning", o.output)
	}

	var in render.Input
	var err error
	if in.Node, err = o.node.NodeOptions(); err != nil {
		return nil, err
	}
	if in.Cluster, err = o.cluster.ClusterInfo(); err != nil {
		return nil, err
	}
	if in.OSP, err = decodeFile(o.osp, render.DecodeOSP); err != nil {
		return nil, err
	}
	if in.MachineDeployment, err = decodeFile(o.machineDeployment, render.DecodeMachineDeployment); err != nil {
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
