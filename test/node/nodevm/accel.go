package nodevm

import (
	"fmt"
	"os"
	"strings"
)

// Accel is how QEMU runs the guest's CPU.
type Accel string

const (
	// TCG emulates the CPU: slow, works everywhere.
	TCG Accel = "tcg"
	// KVM uses the host's virtualization: only where it really works.
	KVM Accel = "kvm"
)

// Args are QEMU's acceleration arguments.
func (a Accel) Args() []string {
	if a == KVM {
		return []string{"-accel", "kvm", "-cpu", "host"}
	}
	// One host thread per virtual CPU.
	return []string{"-accel", "tcg,thread=multi"}
}

// DetectAccel picks KVM only on a machine that is not itself a VM and can open
// /dev/kvm: nested KVM on the CI machines answers KVM_GET_API_VERSION but
// hangs or aborts the guest, so a VM host gets TCG. override ("kvm", "tcg"
// or "") wins; the reason says why.
func DetectAccel(override string) (Accel, string, error) {
	switch override {
	case "kvm":
		return KVM, "OSM_NODE_TEST_ACCEL=kvm", nil
	case "tcg":
		return TCG, "OSM_NODE_TEST_ACCEL=tcg", nil
	case "":
	default:
		return "", "", fmt.Errorf("OSM_NODE_TEST_ACCEL=%q: want kvm, tcg or empty", override)
	}
	cpuinfo, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return TCG, "no /proc/cpuinfo", nil
	}
	return detect(string(cpuinfo), canOpen("/dev/kvm"))
}

func detect(cpuinfo string, kvmOpens bool) (Accel, string, error) {
	if !kvmOpens {
		return TCG, "/dev/kvm is not usable", nil
	}
	for _, line := range strings.Split(cpuinfo, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			for _, flag := range strings.Fields(v) {
				if flag == "hypervisor" {
					return TCG, "this machine is a VM (nested KVM is not trusted)", nil
				}
			}
			return KVM, "/dev/kvm on bare metal", nil
		}
	}
	return TCG, "no CPU flags in /proc/cpuinfo", nil
}

func canOpen(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	_ = f.Close() // opened only to probe
	return true
}
