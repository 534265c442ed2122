package main

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// dockerManifest is the manifest.json of `docker save`, which docker load reads;
// everything else (podman, ctr import, kind load image-archive, skopeo's
// oci-archive:) reads the OCI layout beside it. Docker 25+ saves the same shape.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// writeArchive writes the OCI layout in dir, plus manifest.json for docker, as
// one tar file that depends on nothing but its content: sorted entries, fixed
// modes, owners and times.
func writeArchive(file, dir string, ref name.Tag, img v1.Image, mtime time.Time) error {
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	dm := dockerManifest{Config: blobPath(m.Config.Digest), RepoTags: []string{ref.String()}}
	for _, l := range m.Layers {
		dm.Layers = append(dm.Layers, blobPath(l.Digest))
	}
	manifest, err := json.Marshal([]dockerManifest{dm})
	if err != nil {
		return err
	}
	files := map[string]string{} // name in the archive -> file; "" for a directory
	if err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			files[filepath.ToSlash(rel)+"/"] = ""
		} else {
			files[filepath.ToSlash(rel)] = path
		}
		return nil
	}); err != nil {
		return err
	}
	names := make([]string, 0, len(files)+1)
	for n := range files {
		names = append(names, n)
	}
	names = append(names, "manifest.json")
	sort.Strings(names)

	tmp := file + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(out)
	for _, n := range names {
		if err = addToArchive(tw, n, files[n], manifest, mtime); err != nil {
			break
		}
	}
	if err == nil {
		err = tw.Close()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("failed to write %s: %w", file, err)
	}
	return os.Rename(tmp, file)
}

func addToArchive(tw *tar.Writer, name, path string, manifest []byte, mtime time.Time) error {
	h := &tar.Header{Name: name, ModTime: mtime.UTC().Truncate(time.Second), Format: tar.FormatUSTAR}
	var data []byte
	switch {
	case name == "manifest.json":
		data = manifest
	case path == "":
		h.Typeflag, h.Mode = tar.TypeDir, 0o755
		return tw.WriteHeader(h)
	default:
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return err
		}
	}
	h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(data))
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

func blobPath(h v1.Hash) string {
	return "blobs/" + h.Algorithm + "/" + h.Hex
}
