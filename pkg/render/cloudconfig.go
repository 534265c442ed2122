package render

import (
	"fmt"

	"github.com/Masterminds/semver/v3"
	"k8c.io/machine-controller/sdk/providerconfig"
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
	cfg, err := generateCloudConfig(pc, kubelet)
	if err != nil {
		return "", fmt.Errorf("cloud-config for %s: %w", pc.CloudProvider, err)
	}
	return cfg, nil
}
