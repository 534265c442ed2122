package node

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
	"github.com/osm-apiserver/osm-apiserver/test/node/nodevm"
)

// boot is one VM the test boots as a node of its own MachineDeployment.
type boot struct {
	name     string // in the summary line
	image    string // the kit's image: debian-12, debian-13
	md       string
	node     string // the Machine's name, which the node must register under
	cloud    string
	ipFamily string
	ipv6     bool   // the VM's network is dual-stack
	guestIP  string // the VM's own IPv4 address: the egress proxy finds a kubelet by its Node's InternalIPs
	podCIDRs string // the CNI installer's ranges on this node
	reboot   bool   // reboot once Ready; the node must come back Ready, with its addresses
	edge     bool   // booted without user-data; the MD's join script is run in it
	overlay  bool   // an overlay adds a CA and a unit to the MD (overlay_test.go)
	// brokenMirror: the VM's mirror lacks the containerd.io package, then
	// serves a corrupted kubelet, then is fixed: the machine must report each
	// failed step, then retry and join with the same VM (bootreport_test.go).
	brokenMirror bool
	// restartOSM: once the broken mirror is whole again, stop osm-apiserver
	// for a minute while the node's last steps run, then start it again;
	// the report must lose no record (osmrestart_test.go). Needs brokenMirror.
	restartOSM bool
	// servingCSR: approve the kubelet's serving CSR as an approver would,
	// then kubectl logs and exec (kubelet_serving_test.go).
	servingCSR bool
}

// Each boot costs 6-8 minutes of TCG in CI, so the checks share them: the
// broken mirror's two failures come before the ipv4 node joins (a retry
// costs ~30 s, a boot of its own 6 minutes).
var boots = []boot{
	{name: "ipv4", image: "debian-12", md: "ubuntu-ipv4", node: "ubuntu-ipv4-5d8f7-x2k4q", cloud: "kubevirt", ipFamily: "IPv4", guestIP: "10.0.2.15",
		podCIDRs: "10.244.1.0/24", reboot: true, overlay: true, servingCSR: true, brokenMirror: true, restartOSM: true},
	// Dual-stack shares the edge boot (a whole TCG boot less in CI): the edge
	// join script's kubelet takes both families from the MD's ipFamily.
	// It boots Debian 13 (cloud-init 25: osm-bootstrap's branch for >= 24.1),
	// ipv4 Debian 12 (22.4): both branches run, without a third boot.
	{name: "edge-dual-stack", image: "debian-13", md: "ubuntu-edge", node: "edge-box-1", cloud: "edge", ipFamily: "IPv4+IPv6", ipv6: true, guestIP: "10.0.2.16",
		podCIDRs: "10.244.3.0/24,fd00:10:244:3::/64", edge: true, reboot: true, servingCSR: true},
}

// Bounds of the steps of a boot under TCG on a busy 2-core machine; a boot
// normally needs a quarter of them.
const (
	agentTimeout      = 5 * time.Minute
	edgeScriptTimeout = 15 * time.Minute
	registerTimeout   = 20 * time.Minute
	readyTimeout      = 10 * time.Minute
	podTimeout        = 5 * time.Minute
	rebootTimeout     = 10 * time.Minute
)

// TestBoots boots the VMs at once and reports one line per boot, and one for
// the reboot. A TCG boot keeps ~1.3 of 2 cores busy (measured: dpkg, Python
// and systemd are mostly single-threaded), and the broken mirror's retries
// wait 30 s each, so two boots side by side take ~5 minutes less than one
// after the other.
func TestBoots(t *testing.T) {
	seen := map[string]string{}
	for _, b := range boots {
		if other, ok := seen[b.guestIP]; ok || b.guestIP == "" {
			t.Fatalf("boots %s and %s: each needs a guest IP of its own, have %q", other, b.name, b.guestIP)
		}
		seen[b.guestIP] = b.name
	}
	for _, b := range boots {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			if err := runBoot(t, b); err != nil {
				t.Error(err)
			}
		})
	}
}

func runBoot(t *testing.T, b boot) error {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	label := b.label()
	var overlay *nodeOverlay
	if b.overlay {
		var err error
		if overlay, err = applyOverlay(ctx, b); err != nil {
			report("%s: FAILED: %v", label, err)
			return err
		}
	}
	release, err := holdRegistration(ctx, b)
	if err != nil {
		report("%s: FAILED: %v", label, err)
		return err
	}
	defer release()
	vm, err := startVM(ctx, b)
	if err != nil {
		report("%s: FAILED: %v", label, err)
		return err
	}
	defer vm.Stop()
	// The join window's checks run while the VM provisions, beside the
	// waits below; they release the Node's registration when done.
	window := make(chan error, 1)
	go func() {
		err := checkJoinWindow(ctx, vm, b)
		release()
		window <- err
	}()
	fail := func(err error) error {
		report("%s: FAILED: %v", label, err)
		diagnose(vm, b)
		return err
	}
	if b.brokenMirror {
		if err := runBrokenMirror(ctx, vm, b); err != nil {
			return fail(err)
		}
	}
	var down *outage
	if b.restartOSM {
		if !b.brokenMirror {
			return fail(errors.New("restartOSM needs brokenMirror: the outage starts at its last fix"))
		}
		if down, err = restartOSM(ctx, vm, b); err != nil {
			return fail(err)
		}
	}
	readyAfter, err := joinNode(ctx, vm, b, window)
	if err != nil {
		return fail(err)
	}
	var steps string
	var bootReport *v1alpha1.BootReport
	err = whileServing(func() (err error) {
		steps, bootReport, err = checkBootReport(ctx, vm, b)
		return err
	})
	if err != nil {
		return fail(err)
	}
	retried := ""
	if b.brokenMirror {
		if retried, err = checkRecovered(bootReport); err != nil {
			return fail(err)
		}
	}
	report("%s: Ready after %d s%s, pod Running; reported steps: %s", label, int(readyAfter.Seconds()), retried, steps)
	if down != nil {
		if err := checkSpoolSent(ctx, vm, b, down); err != nil {
			return fail(err)
		}
	}
	if err := checkDebianMirror(ctx, vm, b); err != nil {
		return fail(err)
	}
	fams, err := checkPodToPod(ctx, b)
	if err != nil {
		return fail(err)
	}
	report("%s: two pods on the node reach each other over %s (every pod IP of the peer)", label, fams)
	if err := checkReplayRefused(ctx, vm, b); err != nil {
		return fail(fmt.Errorf("after the join: %w", err))
	}
	report("%s: before the Node registered: a MachineJoin of another boot refused as answered, the live join credential's CSR for a foreign name denied %s, its second CSR for its own name denied %s, the node's approved %s", label,
		nodejoin.ReasonForeignNodeName, nodejoin.ReasonCertificateIssued, nodejoin.ReasonApproved)
	report("%s: MachineJoin carried the boot secret (hash kept); after the join the user-data and join credentials are refused", label)
	if b.servingCSR {
		fams, err := checkKubeletServing(ctx, vm, b)
		if err != nil {
			return fail(err)
		}
		report("%s: serving CSR approved (%s SANs), kubectl logs and exec work", label, fams)
	}
	if overlay != nil {
		if err := checkOverlay(ctx, vm, b, overlay); err != nil {
			return fail(err)
		}
		report("%s: overlay %s applied (CA trusted, drop-in in osm-setup.service's DropInPaths, unit loaded and active)", label, overlayName)
	} else {
		if err := checkNoOverlay(ctx, vm); err != nil {
			return fail(err)
		}
		report("%s: overlay %s not applied, its MD unselected (no drop-in, unit not-found, no CA file)", label, overlayName)
	}
	if !b.reboot {
		return nil
	}
	label = b.label("reboot")
	readyAfter, err = rebootNode(ctx, vm, b)
	if err != nil {
		return fail(fmt.Errorf("after the reboot: %w", err))
	}
	if err := whileServing(func() error { return checkNotReportedAgain(ctx, b, bootReport) }); err != nil {
		return fail(fmt.Errorf("after the reboot: %w", err))
	}
	overlayAgain := ""
	if overlay != nil {
		if err := checkOverlay(ctx, vm, b, overlay); err != nil {
			return fail(fmt.Errorf("after the reboot: %w", err))
		}
		overlayAgain = ", overlay still applied"
	}
	report("%s: Ready after %d s, pod Running, not reported again, spool flushed at boot%s", label, int(readyAfter.Seconds()), overlayAgain)
	return nil
}

// startVM creates the boot's MD, its MachineSet and Machine, takes the
// user-data machine-controller would pass (none for edge) and boots the VM.
func startVM(ctx context.Context, b boot) (*nodevm.VM, error) {
	if err := createMD(ctx, b); err != nil {
		return nil, fmt.Errorf("MachineDeployment %s: %w", b.md, err)
	}
	if err := createMachine(ctx, b); err != nil {
		return nil, err
	}
	var userData []byte
	if !b.edge {
		secret, err := bootstrapUserData(ctx, b.md)
		if err != nil {
			return nil, err
		}
		userData = nodevm.MachineUserData(secret, b.node)
	}
	kubelet, err := kubeletForward(b)
	if err != nil {
		return nil, err
	}
	k := env.kits[b.image]
	mirror, err := env.servers.mirrorFor(b.name, filepath.Join(k.dir, "mirror"), b.brokenMirror)
	if err != nil {
		return nil, err
	}
	cfg := nodevm.Config{
		Name:      b.node,
		Dir:       filepath.Join(env.dir, "vms", b.name),
		Kernel:    filepath.Join(k.dir, "vmlinuz"),
		Initrd:    filepath.Join(k.dir, "initrd.img"),
		Append:    k.cmdline,
		BaseImage: filepath.Join(k.dir, "rootfs.img"),
		UserData:  userData,
		MetaData:  nodevm.MetaData(b.node, b.node),
		MemoryMB:  2048,
		CPUs:      2,
		IPv6:      b.ipv6,
		GuestIP:   b.guestIP,
		Accel:     nodevm.Accel(env.accel),
		Forwards: []nodevm.Forward{
			{GuestAddr: k.guestAddr, GuestPort: k.ports.apiserver, HostPort: atoi(env.kubePort)},
			{GuestAddr: k.guestAddr, GuestPort: k.ports.mirror, HostPort: env.servers.port(mirror)},
			{GuestAddr: k.guestAddr, GuestPort: k.ports.registry, HostPort: env.servers.port(env.servers.registryAddr)},
		},
		HostForwards: kubelet,
	}
	vm, err := nodevm.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	progress("%s: VM %s started (%s, %d MiB, %d CPUs, %s, MAC %s, IPv6 %v); serial console: %s", b.name, b.node, cfg.Accel, cfg.MemoryMB, cfg.CPUs, b.guestIP, cfg.MAC(), b.ipv6, vm.SerialLog)
	return vm, nil
}

// label begins b's summary lines: the profile, the boot, what happens
// (reboot), the image.
func (b boot) label(what ...string) string {
	return strings.Join(append([]string{"node-test osp-ubuntu", b.name}, what...), " ") + " on " + b.image
}

func atoi(s string) int {
	var n int
	_, _ = fmt.Sscan(s, &n)
	return n
}
