package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var testStamp = stamp{
	Version:  "v1.2.3",
	Revision: "0123456789abcdef0123456789abcdef01234567",
	Created:  time.Date(2026, 11, 24, 7, 1, 47, 0, time.UTC),
}

func TestBuildIsReproducible(t *testing.T) {
	bin := hello["0"]
	first, second := digest(t, mustBuild(t, bin, testStamp)), digest(t, mustBuild(t, bin, testStamp))
	if first != second {
		t.Fatalf("two builds of the same binary and stamp: %s and %s", first, second)
	}
	later := testStamp
	later.Created = later.Created.Add(time.Hour)
	if digest(t, mustBuild(t, bin, later)) == first {
		t.Error("another creation time gives the same digest: the stamp is not in the image")
	}
}

func TestImageConfig(t *testing.T) {
	img := mustBuild(t, hello["0"], testStamp)
	if mt, err := img.MediaType(); err != nil || mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %q (%v), want %q", mt, err, types.OCIManifestSchema1)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.MediaType != types.OCIConfigJSON || len(m.Layers) != 1 || m.Layers[0].MediaType != types.OCILayer {
		t.Errorf("config %q, layers %v: want one OCI config and one OCI layer", m.Config.MediaType, m.Layers)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s (the binary's)", cf.OS, cf.Architecture, runtime.GOARCH)
	}
	if !cf.Created.Equal(testStamp.Created) {
		t.Errorf("created %s, want the commit's time %s", cf.Created, testStamp.Created)
	}
	c := cf.Config
	if strings.Join(c.Entrypoint, " ") != "/osm-apiserver" || len(c.Cmd) != 0 {
		t.Errorf("entrypoint %q cmd %q, want the binary and no arguments", c.Entrypoint, c.Cmd)
	}
	if c.User != "65532:65532" {
		t.Errorf("user %q, want the numeric non-root 65532:65532 (runAsNonRoot needs numbers)", c.User)
	}
	want := map[string]string{
		labelTitle:    "osm-apiserver",
		labelVersion:  "v1.2.3",
		labelRevision: testStamp.Revision,
		labelCreated:  "2026-11-24T07:01:47Z",
	}
	for k, v := range want {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
}

func TestLayerHoldsOnlyTheBinaryAndItsUser(t *testing.T) {
	bin := hello["0"]
	img := mustBuild(t, bin, testStamp)
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	binary, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ // name -> mode uid
		"etc/": "755 0", "etc/group": "644 0", "etc/passwd": "644 0", "home/": "755 0",
		"home/nonroot/": "700 65532", "osm-apiserver": "755 0", "tmp/": "1777 0",
	}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%o %d", h.Mode, h.Uid)
		if w, ok := want[h.Name]; !ok || w != got {
			t.Errorf("%s: %q, want %q (listed: %t)", h.Name, got, w, ok)
		}
		delete(want, h.Name)
		if !h.ModTime.Equal(testStamp.Created) || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: time %s, owner %q/%q: want the commit's time and no names", h.Name, h.ModTime, h.Uname, h.Gname)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "osm-apiserver" && string(data) != string(binary) {
			t.Error("the layer's /osm-apiserver is not the binary")
		}
		if h.Name == "etc/passwd" && !strings.Contains(string(data), "nonroot:x:65532:65532:") {
			t.Errorf("/etc/passwd has no user 65532:\n%s", data)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing from the layer: %v", want)
	}
}

func TestRefusesABinaryBuiltWithCgo(t *testing.T) {
	_, err := buildImage(hello["1"], testStamp)
	if err == nil || !strings.Contains(err.Error(), "CGO_ENABLED") {
		t.Fatalf("buildImage of a cgo binary: %v, want an error naming CGO_ENABLED", err)
	}
}

func mustBuild(t *testing.T, bin string, s stamp) v1.Image {
	t.Helper()
	img, err := buildImage(bin, s)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func digest(t *testing.T, img v1.Image) string {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// hello holds a small Go program built for Linux with CGO_ENABLED=0 and =1,
// standing in for osm-apiserver.
var hello = map[string]string{}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "imagebuild-test-")
	if err == nil {
		err = buildHello(dir)
	}
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "failed to build the test binaries:", err)
	} else {
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func buildHello(dir string) error {
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644); err != nil {
		return err
	}
	for _, cgo := range []string{"0", "1"} {
		hello[cgo] = filepath.Join(dir, "hello-cgo"+cgo)
		cmd := exec.Command("go", "build", "-trimpath", "-o", hello[cgo], src)
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo, "GOOS=linux", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build with CGO_ENABLED=%s: %w: %s", cgo, err, out)
		}
	}
	return nil
}
