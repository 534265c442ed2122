package image

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"
)

// built is what two runs of `make image` left, each in a directory of its own.
type built struct {
	dirs    [2]string // IMAGE_DIR of each run
	archive string    // the first run's osm-apiserver.tar
	img     v1.Image  // the image in it
	tags    []string  // its RepoTags (docker's manifest.json)
}

var (
	buildOnce sync.Once
	buildRoot string
	buildRes  built
	buildErr  error
)

// makeImage runs `make image` twice (once per test binary), into temporary
// directories: BIN and IMAGE_DIR are make variables.
func makeImage(t *testing.T) built {
	t.Helper()
	buildOnce.Do(func() {
		if buildRoot, buildErr = os.MkdirTemp("", "osm-image-test-"); buildErr != nil {
			return
		}
		for i := range buildRes.dirs {
			dir := filepath.Join(buildRoot, fmt.Sprint(i))
			buildRes.dirs[i] = filepath.Join(dir, "image")
			// The first build compiles osm-apiserver with -trimpath (minutes when cold).
			if _, buildErr = run(20*time.Minute, repo(), nil, "make", "-s", "image",
				"BIN="+filepath.Join(dir, "osm-apiserver"), "IMAGE_DIR="+buildRes.dirs[i]); buildErr != nil {
				return
			}
		}
		buildRes.archive = filepath.Join(buildRes.dirs[0], "osm-apiserver.tar")
		if buildRes.img, buildErr = tarball.ImageFromPath(buildRes.archive, nil); buildErr != nil {
			return
		}
		var m tarball.Manifest
		if m, buildErr = tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(buildRes.archive) }); buildErr == nil {
			buildRes.tags = m[0].RepoTags
		}
	})
	if buildErr != nil {
		t.Fatalf("make image: %v", buildErr)
	}
	return buildRes
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildRoot != "" {
		_ = os.RemoveAll(buildRoot)
	}
	os.Exit(code)
}

// repo is the checkout's root.
func repo() string {
	root, err := testenv.RepoRoot()
	if err != nil {
		panic(err)
	}
	return root
}

// run runs a command in dir and returns its stdout; the error carries stderr.
func run(timeout time.Duration, dir string, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// versionInfo is one field of hack/version.sh: version, commit or date.
func versionInfo(t *testing.T, field string) string {
	t.Helper()
	out, err := run(time.Minute, repo(), nil, "hack/version.sh", field)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// kubectlBinary is the kubectl hack/build-cluster-binaries.sh builds (cached).
func kubectlBinary(t *testing.T) string {
	t.Helper()
	dir, err := run(30*time.Minute, repo(), nil, "hack/build-cluster-binaries.sh")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(strings.TrimSpace(dir), "kubectl")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
