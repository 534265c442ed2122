// Command cni-installer is the node test's network add-on: run as a hostNetwork
// pod on one node, it writes a bridge + host-local CNI configuration into the
// host's /etc/cni/net.d (mounted at $CNI_CONF_DIR) and stays running, as real
// CNI daemon sets do. The node turns Ready once the container runtime sees it.
//
// POD_CIDRS: comma-separated subnets for this node's pods, one per IP family.
package main

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

type ipRange struct {
	Subnet string `json:"subnet"`
}

type route struct {
	Dst string `json:"dst"`
}

// conflist is the configuration for the CIDRs: one host-local range set and
// one default route per family.
func conflist(cidrs string) ([]byte, error) {
	var ranges [][]ipRange
	var routes []route
	for _, c := range strings.Split(cidrs, ",") {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			return nil, fmt.Errorf("POD_CIDRS: %w", err)
		}
		ranges = append(ranges, []ipRange{{Subnet: p.Masked().String()}})
		if p.Addr().Is4() {
			routes = append(routes, route{Dst: "0.0.0.0/0"})
		} else {
			routes = append(routes, route{Dst: "::/0"})
		}
	}
	return json.MarshalIndent(map[string]any{
		"cniVersion": "1.0.0",
		"name":       "osm-node-test",
		"plugins": []map[string]any{{
			"type":        "bridge",
			"bridge":      "cni0",
			"isGateway":   true,
			"hairpinMode": true,
			"ipam":        map[string]any{"type": "host-local", "ranges": ranges, "routes": routes},
		}},
	}, "", "  ")
}

func main() {
	data, err := conflist(os.Getenv("POD_CIDRS"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "cni-installer: %v\n", err)
		os.Exit(1)
	}
	dir := os.Getenv("CNI_CONF_DIR")
	if dir == "" {
		dir = "/host/etc/cni/net.d"
	}
	// Written aside and renamed: the runtime never reads half a file.
	tmp := filepath.Join(dir, ".10-osm-node-test.conflist")
	err = os.WriteFile(tmp, data, 0o644)
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, "10-osm-node-test.conflist"))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "cni-installer: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("cni-installer: wrote %s/10-osm-node-test.conflist:\n%s\n", dir, data)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	<-signals
}
