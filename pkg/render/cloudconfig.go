package render

import (
	"github.com/Masterminds/semver/v3"
	"k8c.io/machine-controller/sdk/providerconfig"

	"github.com/osm-apiserver/osm-apiserver/pkg/render/cloudconfig"
)

// firstWithoutInTreeProviders is the first Kubernetes minor without in-tree
// cloud providers in the kubelet: from it on nodes need no cloud-config.
var firstWithoutInTreeProviders = semver.MustParse("1.29.0")

// cloudConfig is the content of /etc/kubernetes/cloud-config (.CloudConfig):
// the providerSpec's overwriteCloudConfig if set, nothing for external cloud
// providers and Kubernetes >= 1.29, else generated from the cloudProviderSpec.
func cloudConfig(pc *providerconfig.Config, kubelet *semver.Version, external bool) (string, error) {
	if pc.OverwriteCloudConfig != nil {
		return *pc.OverwriteCloudConfig, nil
	}
	if external || !kubelet.LessThan(firstWithoutInTreeProviders) {
		return "", nil
	}
	return cloudconfig.Generate(cloudconfig.InputFor(pc, kubelet.String()))
}
