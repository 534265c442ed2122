package main

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestRunWritesLayoutArchiveAndOverlay: the three outputs hold the image run
// built, under the name --image gives.
func TestRunWritesLayoutArchiveAndOverlay(t *testing.T) {
	o := testOptions(t, "osm-apiserver:latest")
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	want := digest(t, mustBuild(t, o.binary, testStamp))

	idx, err := layout.ImageIndexFromPath(filepath.Join(o.output, layoutDir))
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest.String() != want ||
		im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "latest" {
		t.Errorf("OCI layout index: %+v, want one image %s named latest", im.Manifests, want)
	}

	checkArchive(t, filepath.Join(o.output, archiveFile), want)

	overlay := readOverlay(t, o)
	for _, line := range []string{"- ../../../artifacts/deploy\n", "- name: osm-apiserver\n", "  newName: osm-apiserver\n", "  newTag: latest\n"} {
		if !strings.Contains(overlay, line) {
			t.Errorf("overlay lacks %q:\n%s", line, overlay)
		}
	}

	// A second run replaces the layout rather than adding a second image to it.
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if idx, err = layout.ImageIndexFromPath(filepath.Join(o.output, layoutDir)); err != nil {
		t.Fatal(err)
	}
	if im, err = idx.IndexManifest(); err != nil || len(im.Manifests) != 1 {
		t.Errorf("after a second run the layout holds %d images (%v), want 1", len(im.Manifests), err)
	}
}

func TestPushPinsTheOverlayToTheDigest(t *testing.T) {
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials of whoever runs the test
	ref := strings.TrimPrefix(reg.URL, "http://") + "/osm/osm-apiserver:v1.2.3"

	o := testOptions(t, ref)
	o.push = true
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	want := digest(t, mustBuild(t, o.binary, testStamp))
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(tag)
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	if got := digest(t, pulled); got != want {
		t.Errorf("pushed image %s, want %s", got, want)
	}
	overlay := readOverlay(t, o)
	repo := strings.TrimSuffix(ref, ":v1.2.3")
	if !strings.Contains(overlay, "  newName: "+repo+"\n  digest: "+want+"\n") {
		t.Errorf("overlay does not pin %s@%s:\n%s", repo, want, overlay)
	}
}

// TestPinPinsTheOverlayWithoutPushing: --pin pins the image's own digest,
// the one a registry holds once the image is pushed as it is (above).
func TestPinPinsTheOverlayWithoutPushing(t *testing.T) {
	o := testOptions(t, "registry.example/osm/osm-apiserver:v1.2.3")
	o.pin = true
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	want := digest(t, mustBuild(t, o.binary, testStamp))
	overlay := readOverlay(t, o)
	if !strings.Contains(overlay, "  newName: registry.example/osm/osm-apiserver\n  digest: "+want+"\n") || strings.Contains(overlay, "newTag") {
		t.Errorf("overlay does not pin registry.example/osm/osm-apiserver@%s alone:\n%s", want, overlay)
	}
}

// testOptions builds into a temporary repository layout: <tmp>/_output/image
// beside <tmp>/artifacts/deploy.
func testOptions(t *testing.T, image string) options {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "artifacts", "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	return options{
		binary:  hello["0"],
		image:   image,
		stamp:   stamp{Version: testStamp.Version, Revision: testStamp.Revision},
		created: testStamp.Created.Format("2006-01-02T15:04:05Z07:00"),
		output:  filepath.Join(root, "_output", "image"),
		deploy:  filepath.Join(root, "artifacts", "deploy"),
	}
}

func readOverlay(t *testing.T, o options) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(o.output, overlayDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
