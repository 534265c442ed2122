package defaultosps

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// cloudNeed is what a node on one cloud needs beyond what every node gets,
// decided per cloud from upstream's default profiles and machine-controller.
// Every cloud a default profile supports must have an entry: a cloud added
// to a profile fails TestCloudSpecificParts until its needs are decided.
type cloudNeed struct {
	// packages and services osm-setup's packages step installs, and enables and
	// starts, per OS (ospv1alpha1.OperatingSystem). Flatcar installs nothing.
	packages, services map[string][]string
	// inTree: kubelets before 1.29 run the cloud's in-tree provider, with
	// /etc/kubernetes/cloud-config, unless the cluster has an external one.
	inTree bool
}

var (
	ubuntu = []string{"ubuntu"}
	el     = []string{"rhel", "rockylinux"}
)

// on lists the same names for each of oses.
func on(names []string, oses ...[]string) map[string][]string {
	m := map[string][]string{}
	for _, list := range oses {
		for _, o := range list {
			m[o] = names
		}
	}
	return m
}

var cloudNeeds = map[string]cloudNeed{
	"alibaba":      {}, // nothing in the guest: upstream installs nothing for it either
	"anexia":       {},
	"aws":          {inTree: true},
	"azure":        {inTree: true},
	"baremetal":    {}, // Tinkerbell provisions the disk; the node is a plain Ubuntu
	"digitalocean": {},
	"edge":         {},
	"gce":          {inTree: true},
	"hetzner":      {},
	// KubeVirt reads the guest's OS and addresses through the QEMU guest agent.
	"kubevirt": {packages: on([]string{"qemu-guest-agent"}, ubuntu, el), services: on([]string{"qemu-guest-agent"}, ubuntu, el)},
	// Nutanix's CSI driver attaches volumes over iSCSI.
	"nutanix":   {packages: on([]string{"open-iscsi"}, ubuntu), services: on([]string{"iscsid"}, ubuntu)},
	"openstack": {},
	// VMware's guest tools report the VM's addresses to vCenter and shut it
	// down cleanly; Cloud Director runs VMs on vSphere. Ubuntu's package starts
	// vmtoolsd itself, EL's does not. On Flatcar the image carries them.
	"vmware-cloud-director": {packages: on([]string{"open-vm-tools"}, ubuntu)},
	"vsphere":               {packages: on([]string{"open-vm-tools"}, ubuntu, el), services: on([]string{"vmtoolsd"}, el), inTree: true},
}

// cloudConfigText is what the test MDs' overwriteCloudConfig holds.
const cloudConfigText = "[Global]\nzone = \"test\"\n"

// TestCloudSpecificParts renders every default profile for every cloud it
// supports, as the kubelet of today (no in-tree providers), as one before 1.29
// and with an external cloud provider, validates each payload as TestRender
// does, and checks the cloud's part: the cloud-config file (mode 0600) and the
// kubelet's cloud flags.
func TestCloudSpecificParts(t *testing.T) {
	requireTools(t, "cloud-init", "shellcheck", "bash")
	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	// One CA: payloads that do not depend on the cloud or the kubelet come out
	// byte-identical and are validated once.
	ca, checked := testCA(t), &checkCache{}
	for _, osp := range osps {
		for _, c := range osp.Spec.SupportedCloudProviders {
			cloud := string(c.Name)
			t.Run(osp.Name+"/"+cloud, func(t *testing.T) {
				t.Parallel()
				need, ok := cloudNeeds[cloud]
				if !ok {
					t.Fatalf("%s supports %s, which cloudNeeds does not list: decide what a node there needs (packages, services, in-tree provider) and add it", osp.Name, cloud)
				}
				for _, tc := range []struct {
					name     string
					kubelet  string
					external bool
				}{{"kubelet-1.33", "1.33.2", false}, {"kubelet-1.28", "1.28.9", false}, {"external", "1.33.2", true}} {
					files := renderForCloud(t, checked, ca, osp, cloud, tc.kubelet, tc.external)
					ctx := fmt.Sprintf("%s/%s/%s", osp.Name, cloud, tc.name)
					cfg, ok := files["/etc/kubernetes/cloud-config"]
					switch {
					case !ok:
						t.Errorf("%s: no /etc/kubernetes/cloud-config", ctx)
					case cfg.mode != 0o600:
						t.Errorf("%s: /etc/kubernetes/cloud-config has mode %#o, want 0600: it may hold the cloud's credentials", ctx, cfg.mode)
					case !tc.external && !strings.Contains(cfg.content, strings.TrimSpace(cloudConfigText)):
						t.Errorf("%s: /etc/kubernetes/cloud-config does not hold the MD's cloud-config:\n%s", ctx, cfg.content)
					}
					unit := files["/etc/systemd/system/kubelet.service"].content
					if unit == "" {
						t.Fatalf("%s: no kubelet.service", ctx)
					}
					var want []string
					switch {
					case tc.external:
						want = []string{"--cloud-provider=external"}
					case need.inTree && tc.kubelet == "1.28.9":
						want = []string{"--cloud-provider=" + cloud, "--cloud-config=/etc/kubernetes/cloud-config"}
					}
					if got := cloudFlags(unit); !slices.Equal(got, want) {
						t.Errorf("%s: the kubelet's cloud flags are %q, want %q", ctx, got, want)
					}
				}
			})
		}
	}
}

// renderForCloud renders osp for an IPv4 MD on cloud with the given kubelet,
// checks both payloads as TestRender does and returns the provisioning
// payload's files by path.
func renderForCloud(t *testing.T, checked *checkCache, ca string, osp *ospv1alpha1.OperatingSystemProfile, cloud, kubelet string, external bool) map[string]payloadFile {
	t.Helper()
	in := renderInput(ca, external)
	in.OSP = osp
	in.MachineDeployment = machineDeployment(t, osp, cloud, "")
	in.MachineDeployment.Spec.Template.Spec.Versions.Kubelet = kubelet
	res, err := render.NewRenderer().Render(in)
	if err != nil {
		t.Fatalf("%s/%s: render: %v", osp.Name, cloud, err)
	}
	if checkPayload(t, checked, "bootstrap", res.Bootstrap) == nil {
		t.FailNow()
	}
	files := checkPayload(t, checked, "provisioning", res.Provisioning)
	if files == nil {
		t.FailNow()
	}
	byPath := map[string]payloadFile{}
	for _, f := range files {
		byPath[f.path] = f
	}
	return byPath
}

// cloudFlags returns the kubelet flags of a unit that name a cloud provider
// or its config.
func cloudFlags(unit string) []string {
	var flags []string
	for _, f := range strings.Fields(unit) {
		if strings.HasPrefix(f, "--cloud-provider") || strings.HasPrefix(f, "--cloud-config") {
			flags = append(flags, f)
		}
	}
	return flags
}

// TestCloudPackages runs the packages step of every default profile's
// osm-setup for every cloud it supports, with the package managers and
// systemctl as stubs, and checks that it installs and starts what the
// cloud needs (cloudNeeds) and none of what only other clouds need.
func TestCloudPackages(t *testing.T) {
	requireSandbox(t)
	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	// Every package and service some cloud needs on some OS.
	cloudOnly := map[string]bool{}
	for _, n := range cloudNeeds {
		for _, m := range []map[string][]string{n.packages, n.services} {
			for _, names := range m {
				for _, name := range names {
					cloudOnly[name] = true
				}
			}
		}
	}
	for _, osp := range osps {
		for _, c := range osp.Spec.SupportedCloudProviders {
			cloud := string(c.Name)
			t.Run(osp.Name+"/"+cloud, func(t *testing.T) {
				need, ok := cloudNeeds[cloud]
				if !ok {
					t.Fatalf("cloudNeeds does not list %s", cloud)
				}
				setup := renderFiles(t, osp.Name, cloud).provisioning["/opt/bin/osm-setup"]
				s := newSandbox(t)
				if err := os.WriteFile(filepath.Join(s.dir, "osm-setup"), []byte(setup), 0o700); err != nil {
					t.Fatal(err)
				}
				s.prepare = "mkdir -p /opt/bin /etc/yum.repos.d /etc/pki/ca-trust/source/anchors /usr/local/share/ca-certificates /etc/ssl/certs && " +
					"ln -sf /osm-test/stubs/osm-swapoff /opt/bin/osm-swapoff"
				for _, name := range []string{"apt-get", "dnf", "yum", "systemctl", "sysctl", "setenforce", "update-ca-certificates", "update-ca-trust", "osm-swapoff"} {
					s.stub(name, "")
				}
				run := s.run(t, "bash /osm-test/osm-setup packages\n")
				if run.err != nil {
					t.Fatalf("osm-setup packages: %v\n%s\ncalls:\n%s", run.err, run.out, strings.Join(run.calls, "\n"))
				}
				installed, started := installedAndStarted(run.calls)
				osName := string(osp.Spec.OSName)
				for _, p := range need.packages[osName] {
					if !installed[p] {
						t.Errorf("%s on %s needs package %s; installed: %s", osp.Name, cloud, p, keys(installed))
					}
				}
				for _, u := range need.services[osName] {
					if !started[u] {
						t.Errorf("%s on %s needs service %s enabled and started; calls:\n%s", osp.Name, cloud, u, strings.Join(run.calls, "\n"))
					}
				}
				for name := range cloudOnly {
					if installed[name] && !slices.Contains(need.packages[osName], name) {
						t.Errorf("%s on %s installs %s, which only other clouds need", osp.Name, cloud, name)
					}
					if started[name] && !slices.Contains(need.services[osName], name) {
						t.Errorf("%s on %s starts %s, which only other clouds need", osp.Name, cloud, name)
					}
				}
			})
		}
	}
}

// installedAndStarted reads stub calls: the packages apt-get, dnf or yum
// install, and the services `systemctl enable --now` starts.
func installedAndStarted(calls []string) (installed, started map[string]bool) {
	installed, started = map[string]bool{}, map[string]bool{}
	for _, c := range calls {
		f := strings.Fields(c)
		switch {
		case len(f) > 2 && slices.Contains([]string{"apt-get", "dnf", "yum"}, f[0]) && f[1] == "install":
			for i := 2; i < len(f); i++ {
				switch {
				case f[i] == "-o":
					i++ // its value
				case !strings.HasPrefix(f[i], "-"):
					// containerd.io=2.2*: the package, not its version.
					installed[strings.FieldsFunc(f[i], func(r rune) bool { return r == '=' || r == '*' })[0]] = true
				}
			}
		case len(f) > 3 && f[0] == "systemctl" && f[1] == "enable" && f[2] == "--now":
			for _, u := range f[3:] {
				started[strings.TrimSuffix(u, ".service")] = true
			}
		}
	}
	return installed, started
}

func keys(m map[string]bool) string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return strings.Join(k, " ")
}

func TestInstalledAndStarted(t *testing.T) {
	installed, started := installedAndStarted([]string{
		"apt-get install -y -o DPkg::Lock::Timeout=600 -o Dpkg::Options::=--force-confold curl open-iscsi",
		"apt-get update",
		"dnf install -y --disableexcludes=osm-containerd containerd.io-2.2*",
		"systemctl enable --now iscsid.service",
		"systemctl enable containerd",
	})
	if keys(installed) != "containerd.io-2.2 curl open-iscsi" {
		t.Errorf("installed %q", keys(installed))
	}
	if keys(started) != "iscsid" {
		t.Errorf("started %q", keys(started))
	}
}

// ovfEnv is an OVF environment as Cloud Director hands it to a VM with two
// NICs: the primary from an IP pool (static), the other with DHCP.
const ovfEnv = `<?xml version="1.0" encoding="UTF-8"?>
<Environment xmlns="http://schemas.dmtf.org/ovf/environment/1" xmlns:oe="http://schemas.dmtf.org/ovf/environment/1" oe:id="">
   <PlatformSection><Kind>VMware ESXi</Kind></PlatformSection>
   <PropertySection>
         <Property oe:key="vCloud_bootproto_0" oe:value="static"/>
         <Property oe:key="vCloud_bootproto_1" oe:value="dhcp"/>
         <Property oe:key="vCloud_dns1_0" oe:value="10.20.0.2"/>
         <Property oe:key="vCloud_dns2_0" oe:value="10.20.0.3"/>
         <Property oe:key="vCloud_gateway_0" oe:value="10.20.30.1"/>
         <Property oe:key="vCloud_ip_0" oe:value="10.20.30.40"/>
         <Property oe:key="vCloud_macaddr_0" oe:value="00:50:56:01:02:03"/>
         <Property oe:key="vCloud_macaddr_1" oe:value="00:50:56:01:02:04"/>
         <Property oe:key="vCloud_netmask_0" oe:value="255.255.254.0"/>
         <Property oe:key="vCloud_numnics" oe:value="2"/>
         <Property oe:key="vCloud_primaryNic" oe:value="0"/>
   </PropertySection>
</Environment>`

// TestFlatcarCloudDirectorStaticAddresses runs the part of osp-flatcar's
// bootstrap that applies Cloud Director's static addresses, with vmtoolsd and
// systemctl as stubs: each NIC the OVF environment gives a static address gets
// a networkd file matched by its MAC, the primary one with gateway and DNS,
// and networkd is restarted; DHCP NICs and other clouds get nothing. There
// the bootstrap does not wait for network-online, which it brings about.
func TestFlatcarCloudDirectorStaticAddresses(t *testing.T) {
	const first, last = "ovf=$(", "if [ -n \"${static:-}\" ]"
	if vs := renderFiles(t, "osp-flatcar", "vsphere").bootstrap["/opt/bin/osm-bootstrap"]; strings.Contains(vs, first) {
		t.Error("osp-flatcar reads the OVF environment on vsphere too")
	}
	// What osm-bootstrap.service waits for: the network elsewhere, networkd only on
	// Cloud Director, where nothing may be online before the step runs.
	const dropIn = "/etc/systemd/system/osm-bootstrap.service.d/10-osm-network.conf"
	for cloud, want := range map[string]string{
		"vsphere":               "[Unit]\nWants=network-online.target\nAfter=network-online.target\n",
		"aws":                   "[Unit]\nWants=network-online.target\nAfter=network-online.target\n",
		"vmware-cloud-director": "[Unit]\nAfter=systemd-networkd.service\n",
	} {
		r := renderFiles(t, "osp-flatcar", cloud)
		if got := r.bootstrap[dropIn]; got != want {
			t.Errorf("%s: %s is %q, want %q", cloud, dropIn, got, want)
		}
		if unit := r.bootstrap["/etc/systemd/system/osm-bootstrap.service"]; unit == "" || strings.Contains(unit, "network-online") {
			t.Errorf("%s: osm-bootstrap.service orders on the network itself, which its drop-in decides per cloud:\n%s", cloud, unit)
		}
	}
	bootstrap := renderFiles(t, "osp-flatcar", "vmware-cloud-director").bootstrap["/opt/bin/osm-bootstrap"]
	step := linesBetween(t, bootstrap, first, last)
	if i, j := strings.Index(bootstrap, step), strings.Index(bootstrap, "until exchange"); i > j {
		t.Error("osm-bootstrap applies the static addresses after the MachineJoin, which needs them")
	}
	requireSandbox(t)
	for _, tc := range []struct {
		name, env string
		want      map[string]string // path → content; nil: networkd not restarted
	}{
		{"static primary and dhcp second", ovfEnv, map[string]string{
			"/etc/systemd/network/00-osm-ovf-0.network": "[Match]\nMACAddress=00:50:56:01:02:03\n\n[Network]\nAddress=10.20.30.40/23\n" +
				"Gateway=10.20.30.1\nDNS=10.20.0.2\nDNS=10.20.0.3\n",
		}},
		{"static second NIC", strings.NewReplacer(`bootproto_1" oe:value="dhcp`, `bootproto_1" oe:value="static`,
			`macaddr_1" oe:value="00:50:56:01:02:04"/>`, `macaddr_1" oe:value="00:50:56:01:02:04"/><Property oe:key="vCloud_ip_1" oe:value="192.168.7.9"/><Property oe:key="vCloud_netmask_1" oe:value="255.255.255.0"/>`,
		).Replace(ovfEnv), map[string]string{
			"/etc/systemd/network/00-osm-ovf-0.network": "[Match]\nMACAddress=00:50:56:01:02:03\n\n[Network]\nAddress=10.20.30.40/23\n" +
				"Gateway=10.20.30.1\nDNS=10.20.0.2\nDNS=10.20.0.3\n",
			"/etc/systemd/network/00-osm-ovf-1.network": "[Match]\nMACAddress=00:50:56:01:02:04\n\n[Network]\nAddress=192.168.7.9/24\n",
		}},
		{"all dhcp", strings.ReplaceAll(ovfEnv, `oe:value="static"`, `oe:value="dhcp"`), nil},
		{"no vmtoolsd answer", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSandbox(t)
			if err := os.WriteFile(filepath.Join(s.dir, "ovf.xml"), []byte(tc.env), 0o600); err != nil {
				t.Fatal(err)
			}
			s.stub("vmtoolsd", `[ "$*" = "--cmd info-get guestinfo.ovfEnv" ] && [ -s /osm-test/ovf.xml ] && cat /osm-test/ovf.xml`)
			s.stub("systemctl", "")
			s.prepare = "mkdir -p /etc/systemd/network"
			run := s.run(t, "set -euo pipefail\n"+step+"\n")
			if run.err != nil {
				t.Fatalf("%v\n%s", run.err, run.out)
			}
			var written []string
			_ = filepath.WalkDir(filepath.Join(run.changes, "etc/systemd/network"), func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					written = append(written, strings.TrimPrefix(p, run.changes))
				}
				return nil
			})
			var want []string
			for p, content := range tc.want {
				want = append(want, p)
				if got, _ := run.changed(p); got != content {
					t.Errorf("%s:\n%s\nwant:\n%s", p, got, content)
				}
			}
			sort.Strings(want)
			if !slices.Equal(written, want) {
				t.Errorf("wrote %q, want %q", written, want)
			}
			restarted := len(run.called("systemctl restart systemd-networkd")) == 1
			if restarted != (tc.want != nil) {
				t.Errorf("networkd restarted: %v, want %v; calls: %q", restarted, tc.want != nil, run.calls)
			}
		})
	}
}

// upstreamProfiles is where upstream's default profiles are, beside the
// repository (../shared/upstream-osm, data for tests).
var upstreamProfiles = filepath.Join("..", "..", "..", "shared", "upstream-osm", "deploy", "osps", "default")

// TestUpstreamCloudParity: every cloud upstream's default profile for an OS
// supports, ours of the same name supports too, so an MD moved from upstream's
// profile to ours renders.
func TestUpstreamCloudParity(t *testing.T) {
	theirs, err := upstreamClouds(upstreamProfiles)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("upstream's default profiles are not at %s (../shared/upstream-osm beside the repository; CI has it): %v", upstreamProfiles, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(theirs) == 0 {
		t.Fatalf("no profiles in %s", upstreamProfiles)
	}
	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string][]string{}
	for _, osp := range osps {
		for _, c := range osp.Spec.SupportedCloudProviders {
			ours[osp.Name] = append(ours[osp.Name], string(c.Name))
		}
	}
	for _, gap := range cloudGaps(ours, theirs) {
		t.Error(gap)
	}
}

// TestCloudGaps: the comparison finds a missing profile and a missing cloud.
func TestCloudGaps(t *testing.T) {
	got := cloudGaps(
		map[string][]string{"osp-a": {"aws"}},
		map[string][]string{"osp-a": {"aws", "nutanix"}, "osp-b": {"aws"}},
	)
	want := []string{
		"osp-a: upstream's supports nutanix, ours does not",
		"osp-b: upstream has a default profile of this name, we do not",
	}
	if !slices.Equal(got, want) {
		t.Errorf("cloudGaps = %q, want %q", got, want)
	}
}

// cloudGaps lists what upstream's profiles (name → clouds) support that ours
// do not.
func cloudGaps(ours, theirs map[string][]string) []string {
	var gaps []string
	for name, clouds := range theirs {
		mine, ok := ours[name]
		if !ok {
			gaps = append(gaps, name+": upstream has a default profile of this name, we do not")
			continue
		}
		for _, c := range clouds {
			if !slices.Contains(mine, c) {
				gaps = append(gaps, fmt.Sprintf("%s: upstream's supports %s, ours does not", name, c))
			}
		}
	}
	sort.Strings(gaps)
	return gaps
}

// upstreamClouds reads the name and supportedCloudProviders of every profile
// in dir.
func upstreamClouds(dir string) (map[string][]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var osp struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				SupportedCloudProviders []struct {
					Name string `json:"name"`
				} `json:"supportedCloudProviders"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(data, &osp); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if osp.Metadata.Name == "" || len(osp.Spec.SupportedCloudProviders) == 0 {
			return nil, fmt.Errorf("%s: no metadata.name or spec.supportedCloudProviders", p)
		}
		for _, c := range osp.Spec.SupportedCloudProviders {
			out[osp.Metadata.Name] = append(out[osp.Metadata.Name], c.Name)
		}
	}
	return out, nil
}
