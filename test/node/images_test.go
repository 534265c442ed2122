package node

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The VMs pull images by their registry.k8s.io names; osm-apiserver's
// --node-containerd-registry-mirrors sends containerd to the test's registry.
const (
	mirroredRegistry  = "registry.k8s.io"
	imageRepo         = "osm-node-test"
	imageTag          = "v1"
	pauseImage        = mirroredRegistry + "/" + imageRepo + "/pause:" + imageTag
	cniInstallerImage = mirroredRegistry + "/" + imageRepo + "/cni-installer:" + imageTag
	netcheckImage     = mirroredRegistry + "/" + imageRepo + "/netcheck:" + imageTag
)

// buildAndPushImages builds the pause, CNI installer and netcheck images from
// test/node/images (static Go binaries on an empty base) and pushes them to
// the registry at addr.
func buildAndPushImages(ctx context.Context, repo, dir, addr string) error {
	start := time.Now()
	for _, cmd := range []string{"pause", "cni-installer", "netcheck"} {
		bin := filepath.Join(dir, cmd)
		build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./test/node/images/"+cmd)
		build.Dir = repo
		build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("failed to build image %s: %w: %s", cmd, err, out)
		}
		img, err := binaryImage(bin, "/"+cmd)
		if err != nil {
			return fmt.Errorf("image %s: %w", cmd, err)
		}
		ref, err := name.ParseReference(fmt.Sprintf("%s/%s/%s:%s", addr, imageRepo, cmd, imageTag), name.Insecure)
		if err != nil {
			return err
		}
		if err := remote.Write(ref, img, remote.WithContext(ctx)); err != nil {
			return fmt.Errorf("failed to push image %s: %w", ref, err)
		}
	}
	progress("images %s, %s and %s built and pushed in %s", pauseImage, cniInstallerImage, netcheckImage, time.Since(start).Round(time.Second))
	return nil
}

// binaryImage is an OCI image of one static binary at path in the image,
// which is its entrypoint.
func binaryImage(bin, path string) (v1.Image, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: strings.TrimPrefix(path, "/"), Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(buf.Bytes())), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config.Entrypoint = []string{path}
	return mutate.ConfigFile(img, cfg)
}
