package app

import (
	"errors"

	"github.com/spf13/cobra"
)

func newServeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Run the aggregated API server and the syncer (the default)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("serve is not implemented yet")
		},
	}
}
