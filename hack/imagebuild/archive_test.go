package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// checkArchive: the archive is an OCI layout holding the image of digest want,
// and docker's manifest.json in it names the same config and layers, tagged
// osm-apiserver:latest.
func checkArchive(t *testing.T, file, want string) {
	t.Helper()
	dir := t.TempDir()
	untar(t, file, dir)
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("%s is not an OCI layout: %v", file, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest.String() != want ||
		im.Manifests[0].Annotations["io.containerd.image.name"] != "docker.io/library/osm-apiserver:latest" {
		t.Fatalf("archive's index: %+v, want one image %s named docker.io/library/osm-apiserver:latest", im.Manifests, want)
	}
	oci, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}

	tag, err := name.NewTag("osm-apiserver:latest")
	if err != nil {
		t.Fatal(err)
	}
	docker, err := tarball.ImageFromPath(file, &tag) // as docker load reads it
	if err != nil {
		t.Fatalf("manifest.json has no image osm-apiserver:latest: %v", err)
	}
	ociConfig, err := oci.RawConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	dockerConfig, err := docker.RawConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if string(ociConfig) != string(dockerConfig) {
		t.Error("manifest.json's config differs from the layout's")
	}
	dl, err := docker.Layers()
	if err != nil {
		t.Fatal(err)
	}
	ol, err := oci.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(dl) != 1 || len(ol) != 1 || digestOf(t, dl[0]) != digestOf(t, ol[0]) {
		t.Errorf("manifest.json's layers differ from the layout's")
	}
}

func digestOf(t *testing.T, l v1.Layer) string {
	t.Helper()
	d, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

func untar(t *testing.T, file, dir string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
