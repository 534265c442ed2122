// Command osm-apiserver serves OperatingSystemConfigs and provisioning payloads
// through the Kubernetes aggregation layer and writes the Secrets machine-controller
// needs. `osm-apiserver render` renders one profile offline.
package main

import (
	"os"

	"k8s.io/component-base/cli"

	"github.com/osm-apiserver/osm-apiserver/cmd/osm-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewRootCommand()))
}
