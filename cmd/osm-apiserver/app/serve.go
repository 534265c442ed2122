package app

import (
	"fmt"

	"github.com/spf13/cobra"

	cliflag "k8s.io/component-base/cli/flag"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/osm-apiserver/osm-apiserver/cmd/osm-apiserver/app/options"
)

func newServeCommand() (*cobra.Command, cliflag.NamedFlagSets) {
	o := options.NewOptions()
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the aggregated API server and the syncer (the default)",
		Long: `Serve OperatingSystemConfigs and ProvisioningPayloads (osm.k8c.io/v1alpha1),
rendered from OperatingSystemProfiles for every MachineDeployment, through the
Kubernetes aggregation layer.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := logsapi.ValidateAndApply(o.Logs, nil); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return runServe(cmd, o)
		},
	}
	fss := o.Flags()
	for _, name := range fss.Order {
		cmd.Flags().AddFlagSet(fss.FlagSets[name])
	}
	setSectionedHelp(cmd, fss)
	return cmd, fss
}

func runServe(cmd *cobra.Command, o *options.Options) error {
	ctx := cmd.Context()
	if err := o.ApplyGoRuntime(); err != nil {
		return err
	}
	cfg, err := o.ServerConfig()
	if err != nil {
		return err
	}
	server, err := cfg.Complete().New()
	if err != nil {
		return fmt.Errorf("failed to create the server: %w", err)
	}
	return server.Run(ctx)
}

// setSectionedHelp makes `--help` of cmd print its flags in named sections.
// Subcommands inheriting the help function keep cobra's default.
func setSectionedHelp(cmd *cobra.Command, fss cliflag.NamedFlagSets) {
	defaultHelp, defaultUsage := cmd.HelpFunc(), cmd.UsageFunc()
	const cols = 0 // no wrapping
	owner := cmd
	cmd.SetUsageFunc(func(c *cobra.Command) error {
		if c != owner {
			return defaultUsage(c)
		}
		fmt.Fprintf(c.OutOrStderr(), "Usage:\n  %s\n", c.UseLine())
		cliflag.PrintSections(c.OutOrStderr(), fss, cols)
		return nil
	})
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c != owner {
			defaultHelp(c, args)
			return
		}
		out := c.OutOrStdout()
		fmt.Fprintf(out, "%s\n\nUsage:\n  %s\n", c.Long, c.UseLine())
		if c.HasAvailableSubCommands() {
			fmt.Fprintf(out, "  %s [command]\n\nCommands:\n", c.CommandPath())
			for _, sub := range c.Commands() {
				if sub.IsAvailableCommand() {
					fmt.Fprintf(out, "  %-12s %s\n", sub.Name(), sub.Short)
				}
			}
		}
		cliflag.PrintSections(out, fss, cols)
	})
}
