package defaultosps

import (
	"fmt"
	"strings"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// Only osp-ubuntu boots in a VM (make node-test). What lets that boot vouch
// for the other profiles is that they run the same node scripts and units:
// TestSharedNodeParts checks they render byte for byte the same as
// osp-ubuntu's, except for the differences listed in parityExceptions.

// sharedPart is one piece every profile renders.
type sharedPart struct {
	name string
	// get returns the piece from a render, "" when the profile lacks it.
	get func(t *testing.T, r parityRender) string
}

type parityRender struct {
	bootstrap, provisioning map[string]string
}

func file(payload, path string) func(*testing.T, parityRender) string {
	return func(t *testing.T, r parityRender) string {
		if payload == "bootstrap" {
			return r.bootstrap[path]
		}
		return r.provisioning[path]
	}
}

var sharedParts = []sharedPart{
	{"osm-node-env", file("provisioning", "/opt/bin/osm-node-env")},
	{"osm-swapoff", file("provisioning", "/opt/bin/osm-swapoff")},
	{"osm-health-monitor", file("provisioning", "/opt/bin/osm-health-monitor")},
	{"osm-health-monitor@.service", file("provisioning", "/etc/systemd/system/osm-health-monitor@.service")},
	{"kubelet.service", file("provisioning", "/etc/systemd/system/kubelet.service")},
	{"kubelet.conf", file("provisioning", "/etc/kubernetes/kubelet.conf")},
	{"containerd drop-in", file("provisioning", "/etc/systemd/system/containerd.service.d/10-osm.conf")},
	{"containerd config", file("provisioning", "/etc/containerd/config.toml")},
	{"crictl.yaml", file("provisioning", "/etc/crictl.yaml")},
	{"kernel modules", file("provisioning", "/etc/modules-load.d/90-kubernetes.conf")},
	{"sysctls", file("provisioning", "/etc/sysctl.d/90-kubernetes.conf")},
	{"bootstrap: the MachineJoin", func(t *testing.T, r parityRender) string {
		s := r.bootstrap["/opt/bin/osm-bootstrap"]
		return lineStarting(t, s, "url=") + "\n" + shellFunction(t, s, "exchange") + "\n" + shellFunction(t, s, "answered") + "\n" +
			linesBetween(t, s, "umask 077", "umask 022") + "\n" + r.bootstrap["/etc/osm/machine-name"]
	}},
	{"bootstrap: cloud-init rerun", func(t *testing.T, r parityRender) string {
		s := r.bootstrap["/opt/bin/osm-bootstrap"]
		if !strings.Contains(s, "\nci() {") {
			return ""
		}
		return paragraph(t, s, "# The first boot configured networking") + "\n" + paragraph(t, s, "# The boot's own cloud-init run")
	}},
	{"setup: downloads of CNI plugins, crictl, kubelet and kubectl", func(t *testing.T, r parityRender) string {
		s := r.provisioning["/opt/bin/osm-setup"]
		return lineStarting(t, s, "fetch() {") + "\n" + lineStarting(t, s, "verify() {") + "\n" +
			paragraph(t, s, "cni_tgz=") + "\n" + paragraph(t, s, "crictl_tgz=") + "\n" + paragraph(t, s, "for bin in kubelet kubectl")
	}},
	{"setup: bootstrap kubeconfig and start", func(t *testing.T, r parityRender) string {
		s := r.provisioning["/opt/bin/osm-setup"]
		return paragraph(t, s, "# The kubelet's bootstrap kubeconfig came") + "\n" + paragraph(t, s, "systemctl daemon-reload")
	}},
}

// parityException is a difference a profile's OS needs: in that profile's
// part, old (from osp-ubuntu's) reads new. An empty old with new "ABSENT"
// means the profile lacks the part.
type parityException struct {
	osp, part, old, new, why string
}

const (
	ubuntuResolvConf = "resolvConf: /run/systemd/resolve/resolv.conf"
	plainResolvConf  = "resolvConf: /etc/resolv.conf"
	operatorLinks    = "\n# Operators on the node find crictl and kubectl on their PATH, with sudo too.\n" +
		`for bin in crictl kubectl; do ln -sfn "/opt/bin/$bin" "/usr/local/bin/$bin"; done`
	flatcarContainerd = "# Flatcar's containerd.service reads its config from $CONTAINERD_CONFIG.\n[Service]\n" +
		"Environment=CONTAINERD_CONFIG=/etc/containerd/config.toml\n"
)

var parityExceptions = []parityException{
	{"osp-rhel", "kubelet.conf", ubuntuResolvConf, plainResolvConf, "EL runs no systemd-resolved"},
	{"osp-rockylinux", "kubelet.conf", ubuntuResolvConf, plainResolvConf, "EL runs no systemd-resolved"},
	{"osp-amzn2", "kubelet.conf", ubuntuResolvConf, plainResolvConf, "Amazon Linux 2 runs no systemd-resolved"},
	{"osp-amzn2", "kubelet.conf", "readOnlyPort: 0", "# Amazon Linux 2 runs cgroup v1, which newer kubelets refuse by default.\nfailCgroupV1: false\nreadOnlyPort: 0",
		"Amazon Linux 2 has cgroup v1 only"},
	{"osp-flatcar", "containerd drop-in", "[Service]\n", flatcarContainerd, "Flatcar's own containerd unit takes its config file from a variable"},
	{"osp-flatcar-cloud-init", "containerd drop-in", "[Service]\n", flatcarContainerd, "Flatcar's own containerd unit takes its config file from a variable"},
	{"osp-flatcar", "setup: downloads of CNI plugins, crictl, kubelet and kubectl", operatorLinks, "", "/opt/bin is on Flatcar's PATH"},
	{"osp-flatcar-cloud-init", "setup: downloads of CNI plugins, crictl, kubelet and kubectl", operatorLinks, "", "/opt/bin is on Flatcar's PATH"},
	{"osp-flatcar", "bootstrap: the MachineJoin", "--cacert /etc/kubernetes/pki/ca.crt", "--cacert /var/lib/osm/bootstrap-ca.crt",
		"the bootstrap keeps its CA apart from /etc/kubernetes/pki/ca.crt, which the provisioning Ignition config writes on the next boot"},
	{"osp-flatcar", "bootstrap: the MachineJoin", "OSM_REPORT_CA=/etc/kubernetes/pki/ca.crt", "OSM_REPORT_CA=/var/lib/osm/bootstrap-ca.crt",
		"osm-report verifies the API server with the bootstrap's CA, as the MachineJoin does"},
	{"osp-flatcar", "bootstrap: cloud-init rerun", "", "ABSENT", "Flatcar with Ignition applies the config with Ignition on a reboot"},
	{"osp-flatcar-cloud-init", "bootstrap: cloud-init rerun", "", "ABSENT", "Flatcar applies cloud-config with coreos-cloudinit"},
}

// parityOSPs are compared with osp-ubuntu.
var parityOSPs = []string{"osp-rhel", "osp-rockylinux", "osp-amzn2", "osp-flatcar-cloud-init", "osp-flatcar"}

func TestSharedNodeParts(t *testing.T) {
	used := map[parityException]bool{}
	for _, cloud := range []string{"aws", "azure", "openstack"} {
		for _, family := range []string{"", "IPv4+IPv6"} {
			ref := parityRenderOf(t, "osp-ubuntu", cloud, family)
			for _, name := range parityOSPs {
				other := parityRenderOf(t, name, cloud, family)
				for _, part := range sharedParts {
					want := part.get(t, ref)
					if want == "" {
						t.Fatalf("osp-ubuntu/%s/%q has no %s", cloud, family, part.name)
					}
					for _, e := range parityExceptions {
						if e.osp == name && e.part == part.name {
							used[e] = true
							if e.old == "" && e.new == "ABSENT" {
								want = ""
							} else if !strings.Contains(want, e.old) {
								t.Errorf("exception %s/%s: osp-ubuntu's part does not contain %q", e.osp, e.part, e.old)
							} else {
								want = strings.ReplaceAll(want, e.old, e.new)
							}
						}
					}
					if got := part.get(t, other); got != want {
						t.Errorf("%s/%s/%q: %s differs from osp-ubuntu's beyond the listed exceptions:\n%s",
							name, cloud, family, part.name, lineDiff(want, got))
					}
				}
			}
		}
	}
	for _, e := range parityExceptions {
		if !used[e] {
			t.Errorf("exception %s/%s matches no part", e.osp, e.part)
		}
	}
}

func parityRenderOf(t *testing.T, name, cloud, family string) parityRender {
	t.Helper()
	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, osp := range osps {
		if osp.Name != name {
			continue
		}
		in := renderInput(testCA(t), family != "")
		in.OSP = onCloud(osp, cloud)
		in.MachineDeployment = machineDeployment(t, osp, cloud, family)
		// One MD name for every profile, so names derived from it match.
		in.MachineDeployment.Name = "md-parity"
		res, err := render.NewRenderer().Render(in)
		if err != nil {
			t.Fatalf("%s/%s: render: %v", name, cloud, err)
		}
		return parityRender{bootstrap: payloadFiles(t, res.Bootstrap), provisioning: payloadFiles(t, res.Provisioning)}
	}
	t.Fatalf("no default profile %s", name)
	return parityRender{}
}

func payloadFiles(t *testing.T, p render.Payload) map[string]string {
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
	return filesByPath(files)
}

// lineStarting returns the first line of script that starts with prefix
// after indentation.
func lineStarting(t *testing.T, script, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(script, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return l
		}
	}
	t.Fatalf("no line starting with %q", prefix)
	return ""
}

// linesBetween returns the lines of script from the first starting with
// first to the next starting with last (after indentation), both included.
func linesBetween(t *testing.T, script, first, last string) string {
	t.Helper()
	p := strings.SplitAfter(script, "\n")
	for i, l := range p {
		if !strings.HasPrefix(strings.TrimSpace(l), first) {
			continue
		}
		for j := i; j < len(p); j++ {
			if strings.HasPrefix(strings.TrimSpace(p[j]), last) {
				return strings.Join(p[i:j+1], "")
			}
		}
	}
	t.Fatalf("no lines from %q to %q", first, last)
	return ""
}

// lineDiff shows the lines of want and got that differ, in order.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "  line %d: osp-ubuntu %q\n          this      %q\n", i+1, wl, gl)
		}
	}
	return b.String()
}
