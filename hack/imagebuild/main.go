// Command imagebuild puts a static osm-apiserver binary into an OCI image without
// a container daemon: one layer on an empty base (no shell), running as uid
// 65532, labelled with the binary's version and commit, and byte-for-byte the
// same for the same commit. `make image` and `make image-push` run it.
//
//	imagebuild --binary bin/osm-apiserver --version v1.2.3 --revision <sha> \
//	  --created 2026-11-24T07:01:47Z [--image osm-apiserver:latest] [--output _output/image] [--push] [--pin]
//
// It writes, under --output: oci/ (an OCI image layout), osm-apiserver.tar (that
// layout as one file, with docker's manifest.json: docker/podman load, kind load
// image-archive, ctr import, skopeo oci-archive:), and deploy/kustomization.yaml
// (artifacts/deploy running this image); --push also uploads it to --image's
// registry with the docker/podman credentials. The overlay pins the image's
// digest once pushed, or with --pin without pushing (make release): a
// registry holds the image under the same digest when oci/ is pushed as it is.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
)

// imageName is the image artifacts/deploy/deployment.yaml names; kustomize's
// images: entries replace it.
const imageName = "osm-apiserver"

type options struct {
	binary  string
	image   string
	stamp   stamp
	created string
	output  string
	deploy  string
	push    bool
	pin     bool
}

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "", "static osm-apiserver binary (make build)")
	flag.StringVar(&o.image, "image", imageName+":latest", "image reference: its tag in the archive, and where --push uploads it")
	flag.StringVar(&o.stamp.Version, "version", "", "version label (hack/version.sh version)")
	flag.StringVar(&o.stamp.Revision, "revision", "", "commit label (hack/version.sh commit)")
	flag.StringVar(&o.created, "created", "", "creation time, RFC 3339: the commit's (hack/version.sh date)")
	flag.StringVar(&o.output, "output", "_output/image", "directory for oci/, osm-apiserver.tar and deploy/")
	flag.StringVar(&o.deploy, "deploy", "artifacts/deploy", "kustomization the overlay in <output>/deploy builds on")
	flag.BoolVar(&o.push, "push", false, "push the image to --image")
	flag.BoolVar(&o.pin, "pin", false, "pin deploy/ to the image's digest without pushing it (push oci/ as it is before applying)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	if o.binary == "" || o.stamp.Version == "" || o.stamp.Revision == "" || o.created == "" {
		return errors.New("--binary, --version, --revision and --created are required")
	}
	var err error
	if o.stamp.Created, err = time.Parse(time.RFC3339, o.created); err != nil {
		return fmt.Errorf("--created: %w", err)
	}
	ref, err := name.NewTag(o.image)
	if err != nil {
		return fmt.Errorf("--image: %w", err)
	}
	img, err := buildImage(o.binary, o.stamp)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.output, 0o755); err != nil {
		return err
	}
	if err := writeLayout(filepath.Join(o.output, layoutDir), ref, img); err != nil {
		return err
	}
	if err := writeArchive(filepath.Join(o.output, archiveFile), filepath.Join(o.output, layoutDir), ref, img, o.stamp.Created); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	size, err := compressedSize(img)
	if err != nil {
		return err
	}
	fmt.Printf("%s %s (%s, %.1f MB compressed) in %s\n", ref, digest, o.stamp.Version, float64(size)/1e6, o.output)
	pinned := ""
	if o.pin {
		pinned = digest.String()
		fmt.Printf("pinned %s@%s (not pushed: push %s as it is before applying)\n", repository(ref), pinned, filepath.Join(o.output, layoutDir))
	}
	if o.push {
		pushed, err := push(ctx, ref, img)
		if err != nil {
			return err
		}
		pinned = pushed.DigestStr()
		fmt.Printf("pushed %s\n", pushed)
	}
	overlay := filepath.Join(o.output, overlayDir)
	if err := writeOverlay(overlay, o.deploy, ref, pinned); err != nil {
		return err
	}
	fmt.Printf("manifests: kubectl kustomize %s\n", overlay)
	return nil
}
