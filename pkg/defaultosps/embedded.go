package defaultosps

import (
	"fmt"

	embedded "github.com/osm-apiserver/osm-apiserver/artifacts/default-osps"
	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned/typed/operatingsystemmanager/v1alpha1"
)

// NewInstaller returns an Installer of the profiles embedded in the binary
// (artifacts/default-osps) into namespace.
func NewInstaller(client osmclient.OperatingSystemProfilesGetter, namespace string) (*Installer, error) {
	profiles, err := embedded.Load()
	if err != nil {
		return nil, fmt.Errorf("failed to load the default operating system profiles: %w", err)
	}
	return &Installer{Client: client, Namespace: namespace, Profiles: profiles}, nil
}
