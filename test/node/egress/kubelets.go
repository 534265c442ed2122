package egress

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// KubeletPort is the port kube-apiserver dials a kubelet at (the Node's
// daemonEndpoints).
const KubeletPort = 10250

// Kubelets maps nodes to the host ports QEMU forwards to their VMs' kubelets.
// The zero value is empty and ready.
type Kubelets struct {
	mu    sync.Mutex
	ports map[string]int
}

// Add records node's forward. A node has one; a port is one node's.
func (k *Kubelets) Add(node string, hostPort int) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if p, ok := k.ports[node]; ok {
		return fmt.Errorf("node %s already has its kubelet forwarded from port %d", node, p)
	}
	for n, p := range k.ports {
		if p == hostPort {
			return fmt.Errorf("port %d already forwards to node %s's kubelet", p, n)
		}
	}
	if k.ports == nil {
		k.ports = map[string]int{}
	}
	k.ports[node] = hostPort
	return nil
}

// Port is node's forward.
func (k *Kubelets) Port(node string) (int, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p, ok := k.ports[node]
	return p, ok
}

// Route says where a CONNECT to host, on the kubelet port, goes: to the
// forward of the one Node whose InternalIPs (internalIPs, every Node's by
// name) have that address. It is refused (0 and why) when host is not an IP,
// no Node or more than one has it (the address names no single VM), or that
// Node's VM has no forward.
func (k *Kubelets) Route(host string, internalIPs map[string][]string) (int, string) {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return 0, fmt.Sprintf("%q is not an IP address", host)
	}
	var nodes []string
	for node, addrs := range internalIPs {
		for _, a := range addrs {
			if b, err := netip.ParseAddr(a); err == nil && b.Unmap() == ip.Unmap() {
				nodes = append(nodes, node)
				break
			}
		}
	}
	slices.Sort(nodes)
	switch len(nodes) {
	case 0:
		return 0, "no Node has InternalIP " + ip.String()
	case 1:
	default:
		return 0, fmt.Sprintf("Nodes %s all have InternalIP %s: it names no single VM", strings.Join(nodes, ", "), ip)
	}
	p, ok := k.Port(nodes[0])
	if !ok {
		return 0, "the kubelet of Node " + nodes[0] + " (InternalIP " + ip.String() + ") is not forwarded"
	}
	return p, ""
}

// Target is the address kube-apiserver CONNECTs to for a kubelet at ip.
func Target(ip string) string {
	return net.JoinHostPort(ip, strconv.Itoa(KubeletPort))
}
