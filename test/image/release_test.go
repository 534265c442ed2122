package image

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// TestMakeReleasePinsTheImage: make release writes install.yaml, every
// object of artifacts/deploy running the image it built pinned by that
// image's digest, the CRDs, the management/worker topology's two sides, and
// SHA256SUMS of what it wrote; binary and image say the release's version.
func TestMakeReleasePinsTheImage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "release")
	const version = "v0.0.0-releasetest"
	if _, err := run(20*time.Minute, repo(), []string{"RELEASE_DIR=" + dir, "ALLOW_DIRTY=1"}, "make", "-s", "release", "VERSION="+version); err != nil {
		t.Fatal(err)
	}
	idx, err := layout.ImageIndexFromPath(filepath.Join(dir, "image", "oci"))
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		t.Fatalf("the release's OCI layout: %v, %v; want one image", im, err)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cf.Config.Labels["org.opencontainers.image.version"]; got != version {
		t.Errorf("image version label %q, want %q", got, version)
	}

	data, err := os.ReadFile(filepath.Join(dir, "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	installed := decodeAll(t, data)
	d := deployment(t, installed)
	if want := "osm-apiserver@" + im.Manifests[0].Digest.String(); d.Spec.Template.Spec.Containers[0].Image != want {
		t.Errorf("install.yaml runs %q, want %q", d.Spec.Template.Spec.Containers[0].Image, want)
	}
	inInstall := map[string]bool{}
	for _, o := range installed {
		inInstall[key(o)] = true
	}
	for _, o := range kustomize(t, filepath.Join(repo(), "artifacts", "deploy")) {
		if !inInstall[key(o)] {
			t.Errorf("install.yaml lacks %s", key(o))
		}
	}

	crds, err := os.ReadFile(filepath.Join(dir, "crds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(decodeAll(t, crds)); n != 2 {
		t.Errorf("crds.yaml holds %d objects, want the 2 CRDs of artifacts/crd", n)
	}

	out, err := run(time.Minute, dir, nil, filepath.Join(dir, "osm-apiserver"), "--version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "osm-apiserver "+version+" ") {
		t.Errorf("the release's binary says %q, want version %s", out, version)
	}

	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(sums)), "\n")
	for _, line := range lines {
		sum, file, ok := strings.Cut(line, "  ")
		content, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || !ok {
			t.Errorf("SHA256SUMS line %q: %v", line, err)
			continue
		}
		if got := sha256.Sum256(content); hex.EncodeToString(got[:]) != sum {
			t.Errorf("SHA256SUMS: %s does not match", file)
		}
	}
	if len(lines) != 6 {
		t.Errorf("SHA256SUMS lists %d files, want install.yaml, install-management.yaml, install-worker.yaml, crds.yaml, the binary and the image archive", len(lines))
	}

	// The management/worker topology: the management side runs the same
	// pinned image with a worker cluster; the worker side has the APIService
	// and no pods.
	data, err = os.ReadFile(filepath.Join(dir, "install-management.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	management := decodeAll(t, data)
	c := deployment(t, management).Spec.Template.Spec.Containers[0]
	if c.Image != d.Spec.Template.Spec.Containers[0].Image || flagValue(c.Args, "worker-cluster-kubeconfig") == "" {
		t.Errorf("install-management.yaml runs %q with --worker-cluster-kubeconfig=%q, want %q with one", c.Image,
			flagValue(c.Args, "worker-cluster-kubeconfig"), d.Spec.Template.Spec.Containers[0].Image)
	}
	data, err = os.ReadFile(filepath.Join(dir, "install-worker.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var apiServices, deployments int
	for _, o := range decodeAll(t, data) {
		switch o.GetKind() {
		case "APIService":
			apiServices++
		case "Deployment":
			deployments++
		}
	}
	if apiServices != 1 || deployments != 0 {
		t.Errorf("install-worker.yaml has %d APIServices and %d Deployments, want 1 and 0", apiServices, deployments)
	}
}
