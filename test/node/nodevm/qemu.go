// Package nodevm boots node VMs with QEMU for the node test: a qcow2 overlay
// over the kit's base image, a NoCloud seed disk, user-mode networking that
// reaches nothing but the ports the test forwards, and the guest agent for
// commands, reboots and logs.
package nodevm

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Forward makes GuestAddr:GuestPort in the VM reach 127.0.0.1:HostPort.
type Forward struct {
	GuestAddr string
	GuestPort int
	HostPort  int
}

// HostForward makes 127.0.0.1:HostPort on the host reach GuestPort of the
// VM's own address (QEMU's hostfwd; restrict=on does not affect it).
type HostForward struct {
	HostPort  int
	GuestPort int
}

// Config describes one VM.
type Config struct {
	Name   string
	Dir    string // overlay, seed, sockets and logs go here
	Kernel string
	Initrd string
	// Append is the kernel command line.
	Append    string
	BaseImage string // raw root file system; never written
	UserData  []byte
	MetaData  []byte
	MemoryMB  int
	CPUs      int
	IPv6      bool // a dual-stack user network; IPv4 only otherwise
	// GuestIP is the IPv4 address QEMU's DHCP gives the VM (dhcpstart), in
	// 10.0.2.0/24; "" is QEMU's 10.0.2.15. VMs that run at once need
	// different ones: the host tells their kubelets apart by the Nodes'
	// addresses (and their MACs, which follow from it, give different
	// SLAAC IPv6 addresses).
	GuestIP  string
	Forwards []Forward
	// HostForwards reach the guest from the host, e.g. the kubelet's port.
	HostForwards []HostForward
	Accel        Accel
}

// defaultGuestIP is QEMU user networking's first DHCP address.
const defaultGuestIP = "10.0.2.15"

// guestIP is the VM's IPv4 address.
func (c Config) guestIP() string {
	if c.GuestIP == "" {
		return defaultGuestIP
	}
	return c.GuestIP
}

// MAC is the VM's NIC's address: QEMU's prefix 52:54:00 and the last three
// bytes of its IPv4 address, so VMs of different addresses differ in MAC too,
// and in their SLAAC (EUI-64) IPv6 addresses.
func (c Config) MAC() string {
	a, err := netip.ParseAddr(c.guestIP())
	if err != nil || !a.Is4() {
		return "52:54:00:12:34:56" // Start refuses such a GuestIP
	}
	b := a.As4()
	return fmt.Sprintf("52:54:00:%02x:%02x:%02x", b[1], b[2], b[3])
}

// checkNetwork refuses a GuestIP QEMU's user network cannot give the VM, or
// one its forwards or QEMU's own services use.
func (c Config) checkNetwork() error {
	a, err := netip.ParseAddr(c.guestIP())
	if err != nil || !a.Is4() || !userNet.Contains(a) {
		return fmt.Errorf("guest IP %q is not an IPv4 address in %s", c.GuestIP, userNet)
	}
	if b := a.As4(); b[3] < 4 || b[3] == 255 {
		return fmt.Errorf("guest IP %s is the network's, its gateway's, DNS server's or broadcast address", a)
	}
	for _, f := range c.Forwards {
		if f.GuestAddr == a.String() {
			return fmt.Errorf("guest IP %s is a forwarded address (port %d)", a, f.GuestPort)
		}
	}
	return nil
}

// userNet is QEMU user networking's default IPv4 network.
var userNet = netip.MustParsePrefix("10.0.2.0/24")

// DefaultAppend boots the kit's kernel on the overlay with the serial console
// the test logs, and eth0 as the image configures it.
const DefaultAppend = "console=ttyS0 root=/dev/vda rw net.ifnames=0"

// VM is a running QEMU.
type VM struct {
	Config    Config
	Agent     *Agent
	SerialLog string
	Started   time.Time

	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// Args are QEMU's arguments for c, with its disks and sockets in c.Dir.
func (c Config) Args() []string {
	// ipv6=on alone would turn IPv4 off.
	net := "user,id=n0,restrict=on,ipv4=on,ipv6=" + onOff(c.IPv6) + ",dhcpstart=" + c.guestIP()
	for _, f := range c.Forwards {
		// One socat per connection: a chardev target would take only the first.
		net += fmt.Sprintf(",guestfwd=tcp:%s:%d-cmd:socat STDIO TCP:127.0.0.1:%d", f.GuestAddr, f.GuestPort, f.HostPort)
	}
	for _, f := range c.HostForwards {
		net += fmt.Sprintf(",hostfwd=tcp:127.0.0.1:%d-%s:%d", f.HostPort, c.guestIP(), f.GuestPort)
	}
	appendLine := c.Append
	if appendLine == "" {
		appendLine = DefaultAppend
	}
	args := []string{
		"-name", c.Name,
		"-machine", "q35",
		"-m", strconv.Itoa(c.MemoryMB),
		"-smp", strconv.Itoa(c.CPUs),
		"-nodefaults", "-no-user-config", "-display", "none",
		"-kernel", c.Kernel, "-initrd", c.Initrd, "-append", appendLine,
		"-drive", "file=" + filepath.Join(c.Dir, "overlay.qcow2") + ",format=qcow2,if=virtio,cache=unsafe,discard=unmap",
		"-drive", "if=virtio,format=raw,readonly=on,file.driver=vvfat,file.dir=" + filepath.Join(c.Dir, "seed") + ",file.label=cidata",
		"-netdev", net,
		"-device", "virtio-net-pci,netdev=n0,mac=" + c.MAC(),
		"-device", "virtio-rng-pci",
		"-chardev", "socket,id=qga0,path=" + filepath.Join(c.Dir, "qga.sock") + ",server=on,wait=off",
		"-device", "virtio-serial-pci",
		"-device", "virtserialport,chardev=qga0,name=org.qemu.guest_agent.0",
		"-serial", "file:" + filepath.Join(c.Dir, "serial.log"),
	}
	return append(args, c.Accel.Args()...)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Start writes the VM's disks and starts QEMU. ctx bounds the disk creation only.
func Start(ctx context.Context, c Config) (*VM, error) {
	if err := c.checkNetwork(); err != nil {
		return nil, fmt.Errorf("vm %s: %w", c.Name, err)
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := CreateOverlay(ctx, c.BaseImage, filepath.Join(c.Dir, "overlay.qcow2")); err != nil {
		return nil, fmt.Errorf("vm %s: %w", c.Name, err)
	}
	if err := CreateSeed(filepath.Join(c.Dir, "seed"), c.UserData, c.MetaData); err != nil {
		return nil, fmt.Errorf("vm %s: %w", c.Name, err)
	}
	logFile, err := os.Create(filepath.Join(c.Dir, "qemu.log"))
	if err != nil {
		return nil, err
	}
	defer func() { _ = logFile.Close() }() // the child has its own descriptor
	cmd := exec.Command("qemu-system-x86_64", c.Args()...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// QEMU dies with the test binary, however that ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("vm %s: %w", c.Name, err)
	}
	vm := &VM{
		Config:    c,
		Agent:     &Agent{Socket: filepath.Join(c.Dir, "qga.sock")},
		SerialLog: filepath.Join(c.Dir, "serial.log"),
		Started:   time.Now(),
		cmd:       cmd,
		exited:    make(chan struct{}),
	}
	go func() {
		vm.err = cmd.Wait()
		close(vm.exited)
	}()
	return vm, nil
}

// Exited reports whether QEMU has ended, and why.
func (vm *VM) Exited() (bool, error) {
	select {
	case <-vm.exited:
		if vm.err == nil {
			return true, errors.New("qemu exited")
		}
		return true, fmt.Errorf("qemu exited: %w (log: %s)", vm.err, filepath.Join(vm.Config.Dir, "qemu.log"))
	default:
		return false, nil
	}
}

// Stop ends QEMU: SIGTERM, SIGKILL after 10 s.
func (vm *VM) Stop() {
	if done, _ := vm.Exited(); done {
		return
	}
	_ = vm.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-vm.exited:
	case <-time.After(10 * time.Second):
		_ = vm.cmd.Process.Kill()
		<-vm.exited
	}
}

// SerialTail returns the last n lines of the serial console.
func (vm *VM) SerialTail(n int) string {
	data, err := os.ReadFile(vm.SerialLog)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(data), "\r", ""), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
