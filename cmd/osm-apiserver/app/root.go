// Package app builds the osm-apiserver command line.
package app

import (
	"github.com/spf13/cobra"
)

// NewRootCommand returns the osm-apiserver command: serving is the default,
// `render` renders one profile offline.
func NewRootCommand() *cobra.Command {
	serve, serveFlags := newServeCommand()
	root := &cobra.Command{
		Use:   "osm-apiserver",
		Short: "Operating System Manager for Kubernetes worker nodes, as an aggregated API server",
		Long: `osm-apiserver renders OperatingSystemProfiles into OperatingSystemConfigs and
bootstrap/provisioning user-data for every MachineDeployment, serves them as
read-only resources through the Kubernetes aggregation layer, and writes the
Secrets machine-controller waits for.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          serve.Args,
		RunE:          serve.RunE,
	}
	root.Flags().AddFlagSet(serve.Flags())
	root.AddCommand(serve, newRenderCommand())
	setSectionedHelp(root, serveFlags)
	return root
}
