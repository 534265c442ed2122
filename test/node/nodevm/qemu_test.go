package nodevm

import (
	"slices"
	"strings"
	"testing"
)

func TestArgsNetwork(t *testing.T) {
	c := Config{
		Name: "n", Dir: "/d", Kernel: "/k", Initrd: "/i", MemoryMB: 2048, CPUs: 2, Accel: TCG,
		Forwards:     []Forward{{GuestAddr: "10.0.2.100", GuestPort: 6443, HostPort: 31000}, {GuestAddr: "10.0.2.100", GuestPort: 8080, HostPort: 31001}},
		HostForwards: []HostForward{{HostPort: 31002, GuestPort: 10250}},
	}
	for _, tc := range []struct {
		ipv6    bool
		guestIP string
		want    []string
	}{
		{false, "", []string{"ipv6=off", ",dhcpstart=10.0.2.15,", ",hostfwd=tcp:127.0.0.1:31002-10.0.2.15:10250"}},
		{true, "10.0.2.16", []string{"ipv6=on", ",dhcpstart=10.0.2.16,", ",hostfwd=tcp:127.0.0.1:31002-10.0.2.16:10250"}},
	} {
		c.IPv6, c.GuestIP = tc.ipv6, tc.guestIP
		args := c.Args()
		i := slices.Index(args, "-netdev")
		if i < 0 {
			t.Fatalf("no -netdev in %q", args)
		}
		netdev := args[i+1]
		for _, want := range append([]string{
			"user,id=n0,restrict=on,ipv4=on,",
			",guestfwd=tcp:10.0.2.100:6443-cmd:socat STDIO TCP:127.0.0.1:31000",
			",guestfwd=tcp:10.0.2.100:8080-cmd:socat STDIO TCP:127.0.0.1:31001",
		}, tc.want...) {
			if !strings.Contains(netdev, want) {
				t.Errorf("-netdev %q lacks %q", netdev, want)
			}
		}
		if strings.Count(netdev, "guestfwd=") != 2 {
			t.Errorf("-netdev %q: want 2 forwards", netdev)
		}
		if err := c.checkNetwork(); err != nil {
			t.Errorf("guest IP %q: %v", tc.guestIP, err)
		}
	}
}

// VMs that run at once get their own addresses, and with them their own MACs
// (hence SLAAC IPv6 addresses).
func TestMACFollowsGuestIP(t *testing.T) {
	macs := map[string]string{}
	for _, ip := range []string{"", "10.0.2.16", "10.0.2.17"} {
		c := Config{GuestIP: ip}
		mac := c.MAC()
		if other, ok := macs[mac]; ok {
			t.Errorf("guest IPs %q and %q share MAC %s", other, ip, mac)
		}
		macs[mac] = ip
		if !strings.HasPrefix(mac, "52:54:00:") || len(mac) != len("52:54:00:00:00:00") {
			t.Errorf("guest IP %q: MAC %q", ip, mac)
		}
		if !strings.Contains(strings.Join(c.Args(), " "), "virtio-net-pci,netdev=n0,mac="+mac) {
			t.Errorf("guest IP %q: the NIC is not given MAC %s", ip, mac)
		}
	}
	if got := (Config{GuestIP: "10.0.2.16"}).MAC(); got != "52:54:00:00:02:10" {
		t.Errorf("MAC of 10.0.2.16 = %s", got)
	}
}

func TestCheckNetworkRefuses(t *testing.T) {
	fwd := []Forward{{GuestAddr: "10.0.2.100", GuestPort: 6443, HostPort: 1}}
	for _, ip := range []string{"10.0.3.15", "fec0::15", "10.0.2.2", "10.0.2.3", "10.0.2.255", "10.0.2.100", "box"} {
		if err := (Config{GuestIP: ip, Forwards: fwd}).checkNetwork(); err == nil {
			t.Errorf("guest IP %q: want an error", ip)
		}
	}
}

func TestArgsDisksAndAgent(t *testing.T) {
	args := strings.Join(Config{Name: "n", Dir: "/d", MemoryMB: 1, CPUs: 1}.Args(), " ")
	for _, want := range []string{
		"file=/d/overlay.qcow2,format=qcow2,if=virtio",
		"if=virtio,format=raw,readonly=on,file.driver=vvfat,file.dir=/d/seed,file.label=cidata",
		"socket,id=qga0,path=/d/qga.sock,server=on,wait=off",
		"name=org.qemu.guest_agent.0",
		"-serial file:/d/serial.log",
		"-append " + DefaultAppend,
		"-accel tcg",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("args lack %q:\n%s", want, args)
		}
	}
}

func TestDetectAccel(t *testing.T) {
	const bare = "processor\t: 0\nflags\t\t: fpu vme vmx sse\n"
	const guest = "processor\t: 0\nflags\t\t: fpu vme vmx sse hypervisor\n"
	for _, tc := range []struct {
		name    string
		cpuinfo string
		kvm     bool
		want    Accel
	}{
		{"bare metal with /dev/kvm", bare, true, KVM},
		{"bare metal without /dev/kvm", bare, false, TCG},
		{"a VM with /dev/kvm (nested)", guest, true, TCG},
		{"no flags", "processor: 0\n", true, TCG},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason, err := detect(tc.cpuinfo, tc.kvm)
			if err != nil || got != tc.want || reason == "" {
				t.Errorf("detect = %q, %q, %v; want %q with a reason", got, reason, err, tc.want)
			}
		})
	}
	if _, _, err := DetectAccel("hvf"); err == nil {
		t.Error("DetectAccel(hvf): want an error")
	}
	if got, _, _ := DetectAccel("tcg"); got != TCG {
		t.Errorf("DetectAccel(tcg) = %q", got)
	}
}
