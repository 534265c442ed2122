package defaultosps

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// TestSysctlsKeepIPv6RoutesWhileForwarding applies the networking sysctls of
// every profile's dual-stack render, as the setup's `sysctl --system` does, in
// a network namespace with an eth0: eth0 must end up accepting router
// advertisements while forwarding (accept_ra 2), set before forwarding turns
// on, since the kernel drops the RA-learned default routes of interfaces whose
// accept_ra is not 2 when forwarding turns on. With only
// net.ipv6.conf.all.accept_ra (which sets no interface), the node boot test's
// dual-stack VM lost its IPv6 default route and osm-node-env failed forever.
func TestSysctlsKeepIPv6RoutesWhileForwarding(t *testing.T) {
	requireTools(t, "ip", "sysctl")
	if os.Geteuid() != 0 {
		t.Skip("applying sysctls in a network namespace needs root (`ip netns add`); make test runs as root in CI")
	}
	dualStack := slices.IndexFunc(hostNetworks, func(h hostNetwork) bool { return h.name == "dual-stack" })
	netns := makeNetns(t, hostNetworks[dualStack])
	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	renderer := render.NewRenderer()
	for _, osp := range osps {
		t.Run(osp.Name, func(t *testing.T) {
			in := renderInput(testCA(t), true)
			in.OSP = osp
			in.MachineDeployment = machineDeployment(t, osp, string(osp.Spec.SupportedCloudProviders[0].Name), "IPv4+IPv6")
			res, err := renderer.Render(in)
			if err != nil {
				t.Fatal(err)
			}
			conf := payloadFileContent(t, res.Provisioning, "/etc/sysctl.d/90-kubernetes.conf")
			// Only the per-namespace IP settings: the others would change the host's kernel.
			var lines []string
			for _, l := range strings.Split(conf, "\n") {
				if strings.HasPrefix(l, "net.ipv4.") || strings.HasPrefix(l, "net.ipv6.") {
					lines = append(lines, l)
				}
			}
			accept := indexOfPrefix(lines, "net.ipv6.conf.*.accept_ra")
			forward := indexOfPrefix(lines, "net.ipv6.conf.all.forwarding")
			if accept < 0 || forward < 0 || accept > forward {
				t.Errorf("want net.ipv6.conf.*.accept_ra = 2 before net.ipv6.conf.all.forwarding = 1:\n%s", conf)
			}
			path := filepath.Join(t.TempDir(), "net.conf")
			if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			reset := exec.Command("ip", "netns", "exec", netns, "sysctl", "-q", "-w", "net.ipv6.conf.eth0.accept_ra=1", "net.ipv6.conf.all.forwarding=0")
			if out, err := reset.CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if out, err := exec.Command("ip", "netns", "exec", netns, "sysctl", "-q", "-p", path).CombinedOutput(); err != nil {
				t.Fatalf("sysctl -p: %v: %s", err, out)
			}
			out, err := exec.Command("ip", "netns", "exec", netns, "sysctl", "-n", "net.ipv6.conf.eth0.accept_ra", "net.ipv6.conf.eth0.forwarding").Output()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Fields(string(out)); len(got) != 2 || got[0] != "2" || got[1] != "1" {
				t.Errorf("eth0: accept_ra, forwarding = %v, want 2, 1", got)
			}
		})
	}
}

func indexOfPrefix(lines []string, prefix string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return i
		}
	}
	return -1
}
