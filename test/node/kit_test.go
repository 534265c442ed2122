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
	dir         string
	kubeVersion string // v1.37.1
	guestAddr   string
	ports       struct{ apiserver, mirror, registry int }
	cmdline     string // "": nodevm.DefaultAppend
}

// loadKit reads the kit of OSM_NODE_KIT (hack/node-test.sh sets it), or builds
// it with hack/node-kit.sh (cached; minutes the first time).
func loadKit(ctx context.Context, repo string) (*kit, error) {
	dir := os.Getenv("OSM_NODE_KIT")
	if dir == "" {
		progress("building the node kit with hack/node-kit.sh (cached after the first build)")
		cmd := exec.CommandContext(ctx, filepath.Join(repo, "hack", "node-kit.sh"))
		cmd.Dir, cmd.Stderr = repo, os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("hack/node-kit.sh: %w", err)
		}
		dir = strings.TrimSpace(string(out))
	}
	vars, err := testenv.ReadShellEnv(filepath.Join(dir, "kit.env"))
	if err != nil {
		return nil, err
	}
	k := &kit{dir: dir, kubeVersion: vars["KUBE_VERSION"], guestAddr: vars["GUEST_ADDR"], cmdline: vars["KERNEL_CMDLINE"]}
	for name, port := range map[string]*int{"APISERVER_PORT": &k.ports.apiserver, "MIRROR_PORT": &k.ports.mirror, "REGISTRY_PORT": &k.ports.registry} {
		if *port, err = strconv.Atoi(vars[name]); err != nil {
			return nil, fmt.Errorf("%s/kit.env: %s: %w", dir, name, err)
		}
	}
	if k.kubeVersion == "" || k.guestAddr == "" {
		return nil, fmt.Errorf("%s/kit.env: KUBE_VERSION or GUEST_ADDR missing", dir)
	}
	for _, f := range []string{"vmlinuz", "initrd.img", "rootfs.img", "mirror"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return nil, fmt.Errorf("the kit is incomplete: %w", err)
		}
	}
	return k, nil
}
