package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"
)

// kit is what hack/node-kit.sh built: the VM image and the mirror's files
// (docs/node-test.md "The kit"), and the fixed guest-side addresses.
type kit struct {
	image       string // debian-12, debian-13
	dir         string
	kubeVersion string // v1.37.1
	guestAddr   string
	ports       struct{ apiserver, mirror, registry int }
	cmdline     string // "": nodevm.DefaultAppend
}

// kitVars are the variables naming the kit of each image the boots use
// (hack/node-test.sh sets them); the image's Debian release is what
// hack/node-kit.sh takes as OSM_NODE_KIT_DEBIAN.
var kitVars = map[string]struct{ variable, release string }{
	"debian-12": {"OSM_NODE_KIT", "12"},
	"debian-13": {"OSM_NODE_KIT_DEBIAN13", "13"},
}

// loadKit reads the kit of image from its variable (kitVars), or builds it
// with hack/node-kit.sh (cached; minutes the first time). A kit it is given
// must be the one hack/node-kit.sh builds now: its KIT_KEY hashes the kit's
// scripts and the OSP it was checked against, and a stale kit would prove
// the boot of another profile.
func loadKit(ctx context.Context, repo, image string) (*kit, error) {
	kv, ok := kitVars[image]
	if !ok {
		return nil, fmt.Errorf("no kit for image %q", image)
	}
	script := filepath.Join(repo, "hack", "node-kit.sh")
	nodeKit := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, script, args...)
		cmd.Dir, cmd.Stderr = repo, os.Stderr
		cmd.Env = append(os.Environ(), "OSM_NODE_KIT_DEBIAN="+kv.release)
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("OSM_NODE_KIT_DEBIAN=%s hack/node-kit.sh %s: %w", kv.release, strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	dir := os.Getenv(kv.variable)
	if dir == "" {
		progress("building the %s node kit with hack/node-kit.sh (cached after the first build)", image)
		var err error
		if dir, err = nodeKit(); err != nil {
			return nil, err
		}
	}
	vars, err := testenv.ReadShellEnv(filepath.Join(dir, "kit.env"))
	if err != nil {
		return nil, err
	}
	k := &kit{image: image, dir: dir, kubeVersion: vars["KUBE_VERSION"], guestAddr: vars["GUEST_ADDR"], cmdline: vars["KERNEL_CMDLINE"]}
	for name, port := range map[string]*int{"APISERVER_PORT": &k.ports.apiserver, "MIRROR_PORT": &k.ports.mirror, "REGISTRY_PORT": &k.ports.registry} {
		if *port, err = strconv.Atoi(vars[name]); err != nil {
			return nil, fmt.Errorf("%s/kit.env: %s: %w", dir, name, err)
		}
	}
	if k.kubeVersion == "" || k.guestAddr == "" {
		return nil, fmt.Errorf("%s/kit.env: KUBE_VERSION or GUEST_ADDR missing", dir)
	}
	want, err := nodeKit("--key")
	if err != nil {
		return nil, err
	}
	if got := vars["KIT_KEY"]; got != want {
		return nil, fmt.Errorf("%s/kit.env: KIT_KEY %q, but hack/node-kit.sh builds %q from these scripts and osp-ubuntu.yaml: "+
			"give %s a kit of this tree, or leave it unset", dir, got, want, kv.variable)
	}
	for _, f := range []string{"vmlinuz", "initrd.img", "rootfs.img", "mirror"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return nil, fmt.Errorf("the kit is incomplete: %w", err)
		}
	}
	return k, nil
}
