// Package defaultosps holds the OperatingSystemProfiles osm-apiserver installs
// by default, one YAML file per profile, embedded in the binary.
package defaultosps

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"

	"sigs.k8s.io/yaml"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
)

// Version is the release of the default profiles. Every profile's spec.version
// equals it, so a release that changes a profile changes its version, which the
// CRD requires of any spec change.
const Version = "v0.9.0"

//go:embed *.yaml
var files embed.FS

// Load decodes every embedded profile, sorted by name. The profiles are parsed
// on every call, so callers own the returned objects.
func Load() ([]*ospv1alpha1.OperatingSystemProfile, error) {
	names, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("failed to list default operating system profiles: %w", err)
	}
	osps := make([]*ospv1alpha1.OperatingSystemProfile, 0, len(names))
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("default operating system profile %s: %w", name, err)
		}
		osp, err := decode(name, data)
		if err != nil {
			return nil, err
		}
		osps = append(osps, osp)
	}
	sort.Slice(osps, func(i, j int) bool { return osps[i].Name < osps[j].Name })
	return osps, nil
}

// decode reads one profile strictly: an unknown field is a typo that would
// otherwise drop part of a profile silently.
func decode(name string, data []byte) (*ospv1alpha1.OperatingSystemProfile, error) {
	osp := &ospv1alpha1.OperatingSystemProfile{}
	if err := yaml.UnmarshalStrict(data, osp); err != nil {
		return nil, fmt.Errorf("default operating system profile %s: %w", name, err)
	}
	want := ospv1alpha1.SchemeGroupVersion.WithKind("OperatingSystemProfile")
	if got := osp.GroupVersionKind(); got != want {
		return nil, fmt.Errorf("default operating system profile %s: kind is %s, want %s", name, got, want)
	}
	if osp.Name == "" || osp.Namespace == "" {
		return nil, fmt.Errorf("default operating system profile %s: metadata.name and metadata.namespace are required", name)
	}
	return osp, nil
}
