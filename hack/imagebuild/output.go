package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// The files `make image` writes into its output directory.
const (
	layoutDir   = "oci"               // OCI image layout: skopeo, crane, podman (oci:), oras
	archiveFile = "osm-apiserver.tar" // the layout as one file, also for docker load (archive.go)
	overlayDir  = "deploy"            // kustomization: artifacts/deploy running this image
)

// writeLayout replaces dir with an OCI image layout holding img, named ref the
// way `docker save` names it (for ctr import and kind load).
func writeLayout(dir string, ref name.Tag, img v1.Image) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("failed to write the OCI layout %s: %w", dir, err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref.TagStr(), // skopeo's oci:DIR:TAG
		"io.containerd.image.name":          containerdName(ref),
	})); err != nil {
		return fmt.Errorf("failed to write the image into %s: %w", dir, err)
	}
	return nil
}

// push uploads img to ref with the credentials docker, podman or crane logged in
// with, and returns the digest it has there.
func push(ctx context.Context, ref name.Tag, img v1.Image) (name.Digest, error) {
	if err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return name.Digest{}, fmt.Errorf("failed to push %s: %w", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return name.Digest{}, err
	}
	return ref.Digest(digest.String()), nil
}

// writeOverlay writes a kustomization of the manifests in base that runs the
// image ref: pinned to its digest once pushed (digest non-empty), else by tag.
// `kubectl kustomize DIR` prints the manifests to apply.
func writeOverlay(dir, base string, ref name.Tag, digest string) error {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	absBase, err := filepath.Abs(base)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(absDir, absBase)
	if err != nil {
		return err
	}
	pin := "  newTag: " + ref.TagStr() + "\n"
	if digest != "" {
		pin = "  digest: " + digest + "\n"
	}
	content := "# Written by `make image`: " + filepath.ToSlash(base) + " running " + ref.String() + ".\n" +
		"apiVersion: kustomize.config.k8s.io/v1beta1\n" +
		"kind: Kustomization\n" +
		"resources:\n" +
		"- " + filepath.ToSlash(rel) + "\n" +
		"images:\n" +
		"- name: " + imageName + "\n" +
		"  newName: " + repository(ref) + "\n" +
		pin
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(content), 0o644)
}

// repository is ref without its tag, as written (osm-apiserver, not
// index.docker.io/library/osm-apiserver).
func repository(ref name.Tag) string {
	return strings.TrimSuffix(ref.String(), ":"+ref.TagStr())
}

// containerdName is ref fully qualified as containerd and docker name images.
func containerdName(ref name.Tag) string {
	registry := ref.RegistryStr()
	if registry == name.DefaultRegistry {
		registry = "docker.io"
	}
	return registry + "/" + ref.RepositoryStr() + ":" + ref.TagStr()
}
