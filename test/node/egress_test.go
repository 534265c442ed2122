package node

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"
	"github.com/osm-apiserver/osm-apiserver/test/node/egress"
	"github.com/osm-apiserver/osm-apiserver/test/node/nodevm"
)

// kube-apiserver's "cluster" egress is an HTTP CONNECT proxy on a unix socket
// (egress.Proxy), as konnectivity's server is in clusters whose nodes the
// control plane cannot route to. The host cannot reach the guests' addresses
// (QEMU's user networking), so the proxy takes a CONNECT to a Node's
// InternalIP on the kubelet port to the hostfwd port of the one VM whose Node
// has that address (kubelets), and one to the aggregated API server's Service
// address (localhost:<osm-apiserver's port>: kube-apiserver proxies
// APIServices through the same egress) to that port. It refuses everything
// else with 403.
var (
	egressSocket string
	kubelets     egress.Kubelets
)

// startEgress writes kube-apiserver's EgressSelectorConfiguration for the
// proxy, starts the proxy and returns the flag that points kube-apiserver at it.
func startEgress(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	egressSocket = filepath.Join(dir, "egress.sock")
	l, err := net.Listen("unix", egressSocket)
	if err != nil {
		return "", err
	}
	p := &egress.Proxy{
		Route: egressRoute,
		Refused: func(target, why string) {
			progress("egress: refused CONNECT %s: %s", target, why)
		},
		DialFailed: func(target string, err error) {
			if host, _, _ := net.SplitHostPort(target); osmStopped.Load() && (host == "localhost" || host == "127.0.0.1") {
				osmStoppedDials.Add(1) // osm-apiserver, stopped by the test: counted, not logged one by one
				return
			}
			progress("egress: CONNECT %s: %v", target, err)
		},
	}
	go func() { _ = p.Serve(l) }()
	config := filepath.Join(dir, "egress-selector.yaml")
	data := fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
`, egressSocket)
	if err := os.WriteFile(config, []byte(data), 0o600); err != nil {
		return "", err
	}
	return "--egress-selector-config-file " + config, nil
}

// kubeletForward, for a boot that checks kubectl logs and exec (servingCSR),
// forwards a free host port to the VM's kubelet and records it for the
// node's addresses. Other boots get none. Each VM has its own guest IP
// (boot.guestIP), so the Nodes' InternalIPs tell the VMs apart.
func kubeletForward(b boot) ([]nodevm.HostForward, error) {
	if !b.servingCSR {
		return nil, nil
	}
	port, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	if err := kubelets.Add(b.node, port); err != nil {
		return nil, err
	}
	return []nodevm.HostForward{{HostPort: port, GuestPort: egress.KubeletPort}}, nil
}

// egressRoute says where a CONNECT to target goes ("" and why not when nowhere).
func egressRoute(target string) (string, string) {
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return "", err.Error()
	}
	if host == "localhost" || host == "127.0.0.1" {
		// The APIService's ExternalName Service: osm-apiserver's port, as
		// hack/local-cluster.sh recorded it.
		vars, err := testenv.ReadShellEnv(filepath.Join(env.dir, "env"))
		if err != nil || vars["OSM_PORT"] == "" || vars["OSM_PORT"] != port {
			return "", "not the aggregated API server's address"
		}
		return net.JoinHostPort("127.0.0.1", port), ""
	}
	if port != strconv.Itoa(egress.KubeletPort) {
		return "", "not a kubelet's port"
	}
	if env.kube == nil {
		return "", "no cluster client yet"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nodes, err := env.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", "listing the Nodes: " + err.Error()
	}
	internalIPs := map[string][]string{}
	for i := range nodes.Items {
		internalIPs[nodes.Items[i].Name] = nodeAddresses(&nodes.Items[i], corev1.NodeInternalIP)
	}
	hostPort, why := kubelets.Route(host, internalIPs)
	if hostPort == 0 {
		return "", why
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(hostPort)), ""
}

// nodeAddresses are n's addresses of the given types.
func nodeAddresses(n *corev1.Node, types ...corev1.NodeAddressType) []string {
	var addrs []string
	for _, a := range n.Status.Addresses {
		if slices.Contains(types, a.Type) {
			addrs = append(addrs, a.Address)
		}
	}
	return addrs
}
