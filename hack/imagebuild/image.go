package main

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// stamp is what the image says about the binary in it: the version `make build`
// stamps into it (hack/version.sh), its commit, and the commit's time, which is
// the image's creation time so that the same commit gives the same image.
type stamp struct {
	Version  string
	Revision string
	Created  time.Time
}

// OCI annotation keys, used as image labels (what `docker inspect` shows).
const (
	labelTitle    = "org.opencontainers.image.title"
	labelVersion  = "org.opencontainers.image.version"
	labelRevision = "org.opencontainers.image.revision"
	labelCreated  = "org.opencontainers.image.created"
)

// buildImage returns the image of the binary at path: one layer (rootFS) on an
// empty base, OCI media types, running as the non-root user.
func buildImage(path string, s stamp) (v1.Image, error) {
	arch, err := staticLinuxArch(path)
	if err != nil {
		return nil, err
	}
	binary, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	created := s.Created.UTC().Truncate(time.Second)
	compressed, err := layerTar(rootFS(binary), created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(compressed)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("failed to make the layer of %s: %w", path, err)
	}

	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	base, err = mutate.ConfigFile(base, &v1.ConfigFile{
		Architecture: arch,
		OS:           "linux",
		Config: v1.Config{
			Entrypoint: []string{binaryPath},
			User:       strconv.Itoa(nonRootUID) + ":" + strconv.Itoa(nonRootGID),
			WorkingDir: "/",
			Labels: map[string]string{
				labelTitle:    "osm-apiserver",
				labelVersion:  s.Version,
				labelRevision: s.Revision,
				labelCreated:  created.Format(time.RFC3339),
			},
		},
		RootFS: v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(base, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: created},
			CreatedBy: "hack/imagebuild " + s.Version,
			Comment:   "osm-apiserver, static, on an empty base",
		},
	})
	if err != nil {
		return nil, err
	}
	return mutate.CreatedAt(img, v1.Time{Time: created})
}

// staticLinuxArch returns the GOARCH of a Go binary built for Linux without cgo,
// which runs on an empty base; anything else would not start in the image.
func staticLinuxArch(path string) (string, error) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("failed to read the Go build info of %s: %w", path, err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["GOOS"] != "linux" {
		return "", fmt.Errorf("%s is built for GOOS=%q, want linux", path, settings["GOOS"])
	}
	if settings["CGO_ENABLED"] != "0" {
		return "", fmt.Errorf("%s is built with cgo (CGO_ENABLED=%q): it needs a libc the image does not have; build with CGO_ENABLED=0 (make build)", path, settings["CGO_ENABLED"])
	}
	return settings["GOARCH"], nil
}

// compressedSize is what a pull downloads: the config and the layers.
func compressedSize(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	size := m.Config.Size
	for _, l := range m.Layers {
		size += l.Size
	}
	return size, nil
}
