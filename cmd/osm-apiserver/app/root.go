// Package app builds the osm-apiserver command line.
package app

import (
	"fmt"

	"github.com/spf13/cobra"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/component-base/version"
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
		Version:       versionString(version.Get()),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          serve.Args,
		RunE:          serve.RunE,
	}
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.Flags().AddFlagSet(serve.Flags())
	root.AddCommand(serve, newRenderCommand(), newMigrateCommand())
	setSectionedHelp(root, serveFlags)
	return root
}

// versionString is what --version prints after the name: the version `make
// build` stamps (k8s.io/component-base/version, which /version serves too),
// its commit and date, and the Go release.
func versionString(v apimachineryversion.Info) string {
	return fmt.Sprintf("%s (commit %s, %s, %s %s)", v.GitVersion, v.GitCommit, v.BuildDate, v.GoVersion, v.Platform)
}
