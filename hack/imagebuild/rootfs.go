package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"time"
)

// The user the image runs as: distroless's "nonroot", so that runAsNonRoot can be
// checked by the kubelet (it needs a numeric user) and files it owns are obvious.
const (
	nonRootUID = 65532
	nonRootGID = 65532
	// binaryPath is where the binary lives and the image's entrypoint.
	binaryPath = "/osm-apiserver"
)

// entry is one file or directory of the image's only layer.
type entry struct {
	name     string // without the leading slash
	mode     int64
	uid, gid int
	data     []byte // nil for a directory
}

// rootFS lists the whole file system: the binary and what a static Go binary
// expects around it (users for the uid it runs as, a home, a writable /tmp). No
// shell, no package manager, no CA certificates: osm-apiserver only talks TLS to
// kube-apiserver, whose CA comes with the ServiceAccount or the kubeconfig.
func rootFS(binary []byte) []entry {
	return []entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte(
			"root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "home/", mode: 0o755},
		{name: "home/nonroot/", mode: 0o700, uid: nonRootUID, gid: nonRootGID},
		{name: binaryPath[1:], mode: 0o755, data: binary},
		{name: "tmp/", mode: 0o1777},
	}
}

// layerTar writes entries as a gzip'ed tar that depends on nothing but its
// inputs: fixed order, owners and times, no user or host names, and a gzip
// header without name or time. Two builds of the same commit are byte-identical.
func layerTar(entries []entry, mtime time.Time) ([]byte, error) {
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{
			Name:     e.name,
			Mode:     e.mode,
			Uid:      e.uid,
			Gid:      e.gid,
			ModTime:  mtime.UTC().Truncate(time.Second),
			Typeflag: tar.TypeReg,
			Size:     int64(len(e.data)),
			Format:   tar.FormatUSTAR,
		}
		if e.data == nil {
			h.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("failed to write %s into the layer: %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("failed to write %s into the layer: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
