package render

import (
	"errors"

	"github.com/Masterminds/semver/v3"
	"k8c.io/machine-controller/sdk/providerconfig"
)

// generateCloudConfig is wired to pkg/render/cloudconfig.
var (
	generateCloudConfig = func(*providerconfig.Config, *semver.Version) (string, error) {
		return "", errors.New("no cloud-config generator")
	}
)
