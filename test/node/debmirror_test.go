package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"
	"github.com/osm-apiserver/osm-apiserver/test/node/nodevm"
)

// checkDebianMirror checks that the setup's `apt-get install` really
// installed packages from the kit's Debian package mirror (docs/node-test.md
// "The kit"): every package the mirror serves is installed on the node at the
// mirror's version, none of them is in the image, and this VM's mirror served
// each one's .deb. It reports how many.
func checkDebianMirror(ctx context.Context, vm *nodevm.VM, b boot) error {
	dir := env.kits[b.image].dir
	vars, err := testenv.ReadShellEnv(filepath.Join(dir, "kit.env"))
	if err != nil {
		return err
	}
	ospPackages := strings.Fields(vars["DEBIAN_MIRROR_PACKAGES"])
	if len(ospPackages) == 0 {
		return fmt.Errorf("%s/kit.env names no DEBIAN_MIRROR_PACKAGES: a kit without the Debian mirror", dir)
	}
	served, err := readColumns(filepath.Join(dir, "mirror-packages.txt")) // package, version, pool file
	if err != nil {
		return err
	}
	image, err := readColumns(filepath.Join(dir, "image-packages.txt")) // package, version
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := vm.Agent.Run(ctx, `dpkg-query -W -f '${Package}\t${Version}\t${db:Status-Abbrev}\n'`)
	if err != nil {
		return fmt.Errorf("dpkg-query on the node: %w", err)
	}
	installed := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Split(line, "\t"); len(f) == 3 && strings.HasPrefix(f[2], "ii") {
			installed[f[0]] = f[1]
		}
	}
	mirrorLog, err := os.ReadFile(env.servers.mirrorLog(b.name)) // this VM's requests alone
	if err != nil {
		return err
	}
	var problems []string
	for pkg, s := range served {
		switch {
		case image[pkg] != nil:
			problems = append(problems, pkg+" is in the image")
		case installed[pkg] != s[0]:
			problems = append(problems, fmt.Sprintf("%s %s is not installed (installed: %q)", pkg, s[0], installed[pkg]))
		case !strings.Contains(string(mirrorLog), " GET /debian/"+s[1]+" 200\n"):
			problems = append(problems, "the mirror never served "+s[1])
		}
	}
	for _, pkg := range ospPackages {
		if served[pkg] == nil {
			problems = append(problems, "the mirror does not serve "+pkg)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("packages from the Debian mirror: %s", strings.Join(problems, "; "))
	}
	report("%s: %d packages installed from the local Debian mirror (%s, and their dependencies), none of them in the image",
		b.label(), len(served), strings.Join(ospPackages, ", "))
	return nil
}

// readColumns reads a kit's tab-separated list: the first column, the rest.
func readColumns(path string) (map[string][]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if f := strings.Split(line, "\t"); len(f) >= 2 {
			m[f[0]] = f[1:]
		}
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	return m, nil
}
