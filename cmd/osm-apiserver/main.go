// Command osm-apiserver serves OperatingSystemConfigs and provisioning payloads
// through the Kubernetes aggregation layer and writes the Secrets machine-controller
// needs. `osm-apiserver render` renders one profile offline.
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/osm-apiserver/osm-apiserver/cmd/osm-apiserver/app"
)

func main() {
	root := app.NewRootCommand()
	// SIGTERM (the kubelet stopping the pod) or SIGINT shuts the server down
	// gracefully, as kube-apiserver does; a second one exits at once.
	root.SetContext(genericapiserver.SetupSignalContext())
	os.Exit(app.ExitCode(root, cli.Run(root)))
}
