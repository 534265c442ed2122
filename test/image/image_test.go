package image

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

func TestMakeImageIsReproducible(t *testing.T) {
	b := makeImage(t)
	for _, f := range []string{"osm-apiserver.tar", "oci/index.json"} {
		first, err := os.ReadFile(filepath.Join(b.dirs[0], f))
		if err != nil {
			t.Fatal(err)
		}
		second, err := os.ReadFile(filepath.Join(b.dirs[1], f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, second) {
			t.Errorf("two runs of make image wrote different %s", f)
		}
	}
	d, err := b.img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(b.archive)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image config %s, archive %.1f MB", d, float64(st.Size())/1e6)
}

func TestImageRunsTheStampedBinary(t *testing.T) {
	b := makeImage(t)
	cf, err := b.img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	version, commit, date := versionInfo(t, "version"), versionInfo(t, "commit"), versionInfo(t, "date")
	for label, want := range map[string]string{
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.revision": commit,
		"org.opencontainers.image.created":  date,
	} {
		if got := cf.Config.Labels[label]; got != want {
			t.Errorf("label %s = %q, want %q (hack/version.sh)", label, got, want)
		}
	}
	if got := cf.Created.UTC().Format(time.RFC3339); got != date {
		t.Errorf("created %s, want the commit's time %s", got, date)
	}

	files := imageFiles(t, b.img)
	if len(cf.Config.Entrypoint) != 1 || len(cf.Config.Cmd) != 0 {
		t.Fatalf("entrypoint %q cmd %q, want the binary alone", cf.Config.Entrypoint, cf.Config.Cmd)
	}
	entry := cf.Config.Entrypoint[0]
	bin, ok := files[strings.TrimPrefix(entry, "/")]
	if !ok || bin.Mode&0o111 == 0 {
		t.Fatalf("the entrypoint %s is not an executable in the image", entry)
	}
	for name, f := range files {
		executable := f.Typeflag == tar.TypeReg && f.Mode&0o111 != 0
		if executable && name != strings.TrimPrefix(entry, "/") || slices.Contains([]string{"sh", "bash", "busybox"}, path.Base(name)) {
			t.Errorf("the image has %s besides the binary: no shell or tools wanted", name)
		}
	}
	checkNonRootUser(t, cf.Config.User, files["etc/passwd"])

	exe := filepath.Join(t.TempDir(), path.Base(entry))
	if err := os.WriteFile(exe, bin.data, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := run(time.Minute, t.TempDir(), nil, exe, "--version")
	if err != nil {
		t.Fatal(err)
	}
	if want := "osm-apiserver " + version + " (commit " + commit + ", " + date + ", go"; !strings.HasPrefix(out, want) {
		t.Errorf("%s --version printed %q, want it to start with %q", entry, out, want)
	}
}

// checkNonRootUser: the image runs as numeric uid:gid (the kubelet checks
// runAsNonRoot only on numbers), not root, and /etc/passwd names the uid.
func checkNonRootUser(t *testing.T, user string, passwd file) {
	t.Helper()
	uid, gid, ok := strings.Cut(user, ":")
	n, err := strconv.Atoi(uid)
	if _, gerr := strconv.Atoi(gid); !ok || err != nil || gerr != nil || n == 0 {
		t.Fatalf("image user %q, want a numeric non-root uid:gid", user)
	}
	if !strings.Contains(string(passwd.data), ":x:"+uid+":"+gid+":") {
		t.Errorf("/etc/passwd has no user %s:\n%s", user, passwd.data)
	}
}

type file struct {
	tar.Header
	data []byte
}

// imageFiles is the image's file system by path (no leading slash).
func imageFiles(t *testing.T, img v1.Image) map[string]file {
	t.Helper()
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	files := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(h.Name, "/")] = file{Header: *h, data: data}
	}
}
