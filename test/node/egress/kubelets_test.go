package egress

import (
	"strings"
	"testing"
)

func TestKubeletsRoute(t *testing.T) {
	var k Kubelets
	for node, port := range map[string]int{"ipv4-node": 31001, "dual-node": 31002} {
		if err := k.Add(node, port); err != nil {
			t.Fatal(err)
		}
	}
	nodes := map[string][]string{
		"ipv4-node":    {"10.0.2.15"},
		"dual-node":    {"10.0.2.16", "fec0::5054:ff:fe00:210"},
		"no-forward":   {"10.0.2.17"},
		"not-yet-here": nil,
	}
	for _, tc := range []struct {
		name, host string
		port       int
		why        string // a part of the refusal
	}{
		{"an IPv4 node's address", "10.0.2.15", 31001, ""},
		{"a dual-stack node's IPv4 address", "10.0.2.16", 31002, ""},
		{"a dual-stack node's IPv6 address", "fec0::5054:ff:fe00:210", 31002, ""},
		{"the IPv6 address written out", "fec0:0:0:0:5054:ff:fe00:210", 31002, ""},
		{"an unknown address", "10.0.2.18", 0, "no Node has InternalIP 10.0.2.18"},
		{"an unknown IPv6 address", "fec0::1", 0, "no Node has InternalIP fec0::1"},
		{"a node without a forward", "10.0.2.17", 0, "the kubelet of Node no-forward"},
		{"a host name", "dual-node", 0, "not an IP address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port, why := k.Route(tc.host, nodes)
			if port != tc.port || (tc.why == "") != (why == "") || !strings.Contains(why, tc.why) {
				t.Errorf("Route(%s) = %d, %q; want %d, %q", tc.host, port, why, tc.port, tc.why)
			}
		})
	}
	// Two Nodes with one address, as two VMs on QEMU's default 10.0.2.15:
	// the address names neither.
	nodes["ipv4-node"] = append(nodes["ipv4-node"], "10.0.2.16")
	if port, why := k.Route("10.0.2.16", nodes); port != 0 || !strings.Contains(why, "Nodes dual-node, ipv4-node all have InternalIP 10.0.2.16") {
		t.Errorf("Route of a duplicate address = %d, %q; want a refusal naming both Nodes", port, why)
	}
	if port, why := k.Route("fec0::5054:ff:fe00:210", nodes); port != 31002 {
		t.Errorf("Route of the dual-stack node's IPv6 address beside a duplicate IPv4 = %d, %q", port, why)
	}
}

func TestKubeletsAdd(t *testing.T) {
	var k Kubelets
	if err := k.Add("a", 31001); err != nil {
		t.Fatal(err)
	}
	if err := k.Add("a", 31002); err == nil {
		t.Error("a second forward of node a: want an error")
	}
	if err := k.Add("b", 31001); err == nil {
		t.Error("node b on node a's port: want an error")
	}
	if p, ok := k.Port("a"); !ok || p != 31001 {
		t.Errorf("Port(a) = %d, %v", p, ok)
	}
	if _, ok := k.Port("b"); ok {
		t.Error("Port(b): want none")
	}
}
