package render

import (
	"errors"

	"github.com/Masterminds/semver/v3"
	"k8c.io/machine-controller/sdk/providerconfig"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// generateCloudConfig and encodeIgnition are wired to pkg/render/cloudconfig and
// pkg/render/ignition.
var (
	generateCloudConfig = func(*providerconfig.Config, *semver.Version) (string, error) {
		return "", errors.New("no cloud-config generator")
	}
	encodeIgnition = func(osm.OSCConfig, ignitionOptions) ([]byte, error) {
		return nil, errors.New("no ignition encoder")
	}
)

type ignitionOptions struct {
	hostname string
}
