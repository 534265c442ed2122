package app

import (
	"errors"

	"github.com/spf13/cobra"
)

func newRenderCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "render",
		Short: "Render one OperatingSystemProfile against one MachineDeployment, offline",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("render is not implemented yet")
		},
	}
}
