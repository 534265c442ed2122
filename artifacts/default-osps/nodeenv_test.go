package defaultosps

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// hostNetwork is a network namespace standing in for a node: its addresses
// and default routes, one per family it has.
type hostNetwork struct {
	name     string
	v4, v6   string // the node's address; "" when the host lacks the family
	hasV4    bool
	hasV6    bool
	ipSetups [][]string
}

var hostNetworks = []hostNetwork{
	{name: "ipv4-only", v4: "192.0.2.10", hasV4: true, ipSetups: [][]string{
		{"addr", "add", "192.0.2.10/24", "dev", "eth0"},
		{"-4", "route", "add", "default", "via", "192.0.2.1", "dev", "eth0"},
	}},
	{name: "ipv6-only", v6: "2001:db8::10", hasV6: true, ipSetups: [][]string{
		{"addr", "add", "2001:db8::10/64", "dev", "eth0", "nodad"},
		{"-6", "route", "add", "default", "via", "2001:db8::1", "dev", "eth0"},
	}},
	{name: "dual-stack", v4: "192.0.2.10", v6: "2001:db8::10", hasV4: true, hasV6: true, ipSetups: [][]string{
		{"addr", "add", "192.0.2.10/24", "dev", "eth0"},
		{"-4", "route", "add", "default", "via", "192.0.2.1", "dev", "eth0"},
		{"addr", "add", "2001:db8::10/64", "dev", "eth0", "nodad"},
		{"-6", "route", "add", "default", "via", "2001:db8::1", "dev", "eth0"},
	}},
}

// TestNodeEnvRuns renders osm-node-env from every default profile for IPv4,
// IPv6 and both dual-stack MDs and runs it in IPv4-only, IPv6-only and
// dual-stack network namespaces: it must write the node IP(s) of the MD's
// families wherever the host has them, whatever the other family does, and
// fail with a message naming the missing route otherwise.
func TestNodeEnvRuns(t *testing.T) {
	requireTools(t, "ip", "bash", "sed", "hostname")
	if os.Geteuid() != 0 {
		t.Skip("running osm-node-env in network namespaces needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) for `ip netns add`; make test runs as root in CI")
	}
	namespaces := map[string]string{}
	for _, hn := range hostNetworks {
		namespaces[hn.name] = makeNetns(t, hn)
	}

	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	ca := testCA(t)
	renderer := render.NewRenderer()
	for _, osp := range osps {
		for _, family := range []string{"", "IPv6", "IPv4+IPv6", "IPv6+IPv4"} {
			in := renderInput(ca, family != "")
			in.OSP = osp
			in.MachineDeployment = machineDeployment(t, osp, string(osp.Spec.SupportedCloudProviders[0].Name), family)
			res, err := renderer.Render(in)
			if err != nil {
				t.Fatalf("%s %q: render: %v", osp.Name, family, err)
			}
			script := payloadFileContent(t, res.Provisioning, "/opt/bin/osm-node-env")
			for _, hn := range hostNetworks {
				t.Run(fmt.Sprintf("%s/md-%s/host-%s", osp.Name, familyName(family), hn.name), func(t *testing.T) {
					checkNodeEnv(t, namespaces[hn.name], script, family, hn)
				})
			}
		}
	}
}

func familyName(family string) string {
	if family == "" {
		return "IPv4"
	}
	return family
}

// checkNodeEnv runs the script in the namespace and checks its outcome.
func checkNodeEnv(t *testing.T, netns, script, family string, hn hostNetwork) {
	dir := t.TempDir()
	path := filepath.Join(dir, "osm-node-env")
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	envFile := filepath.Join(dir, "kubelet.env")
	cmd := exec.Command("ip", "netns", "exec", netns, "bash", path)
	cmd.Env = append(os.Environ(), "OSM_KUBELET_ENV_FILE="+envFile)
	out, runErr := cmd.CombinedOutput()

	var want []string
	var missing string
	for _, f := range strings.Split(familyName(family), "+") {
		switch {
		case f == "IPv4" && hn.hasV4:
			want = append(want, hn.v4)
		case f == "IPv6" && hn.hasV6:
			want = append(want, hn.v6)
		case missing == "":
			missing = f
		}
	}
	if missing != "" {
		if runErr == nil {
			t.Fatalf("osm-node-env succeeded on a host without %s, want an error; output: %s", missing, out)
		}
		if !strings.Contains(string(out), "needs an "+missing+" default route") {
			t.Errorf("osm-node-env failed without naming the missing %s default route: %s", missing, out)
		}
		if _, err := os.Stat(envFile); err == nil {
			t.Errorf("osm-node-env wrote %s although it failed", envFile)
		}
		return
	}
	if runErr != nil {
		t.Fatalf("osm-node-env: %v: %s", runErr, out)
	}
	env, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatalf("osm-node-env succeeded but wrote no env file: %v; output: %s", err, out)
	}
	wantLine := "KUBELET_NODE_IP=" + strings.Join(want, ",") + "\n"
	if !strings.HasPrefix(string(env), wantLine) {
		t.Errorf("kubelet.env = %q, want it to start with %q", env, wantLine)
	}
	if !strings.Contains(string(env), "\nKUBELET_HOSTNAME=") || strings.Contains(string(env), "\nKUBELET_HOSTNAME=\n") {
		t.Errorf("kubelet.env = %q, want a KUBELET_HOSTNAME", env)
	}
}

// makeNetns creates a network namespace with a veth pair (eth0 and its peer,
// both inside, so the link is up without touching the host's namespace) and
// the addresses and routes of hn. It is deleted when the test ends.
func makeNetns(t *testing.T, hn hostNetwork) string {
	t.Helper()
	name := fmt.Sprintf("osm-nodeenv-%d-%s", os.Getpid(), hn.name)
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
	})
	setups := append([][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", "eth0", "type", "veth", "peer", "name", "peer0"},
		{"link", "set", "peer0", "up"},
		{"link", "set", "eth0", "up"},
	}, hn.ipSetups...)
	for _, args := range setups {
		args = append([]string{"-n", name}, args...)
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("network namespace %s: ip %s: %v: %s", hn.name, strings.Join(args, " "), err, out)
		}
	}
	return name
}

// payloadFileContent returns the content of one file a payload writes.
func payloadFileContent(t *testing.T, p render.Payload, path string) string {
	t.Helper()
	var files []payloadFile
	var err error
	if p.Format == osm.PayloadFormatIgnition {
		files, err = ignitionFiles(p.UserData)
	} else {
		files, err = cloudConfigFiles(p.UserData)
	}
	if err != nil {
		t.Fatal(err)
	}
	content, ok := filesByPath(files)[path]
	if !ok {
		t.Fatalf("the payload writes no %s", path)
	}
	return content
}
