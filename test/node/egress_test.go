package node

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"
	"github.com/osm-apiserver/osm-apiserver/test/node/nodevm"
)

// kubeletPort is the port kube-apiserver dials a kubelet at (the Node's
// daemonEndpoints).
const kubeletPort = 10250

// egress is kube-apiserver's "cluster" egress: an HTTP CONNECT proxy on a unix
// socket, as konnectivity's server is in clusters whose nodes the control
// plane cannot route to. The host cannot reach a guest's 10.0.2.15 (QEMU's
// user networking), so the proxy takes CONNECTs to the kubelet VM's Node's
// InternalIPs on the kubelet port to the VM's hostfwd port, and those to the
// aggregated API server's Service address (localhost:<osm-apiserver's port>:
// kube-apiserver proxies APIServices through the same egress) to that port.
// It refuses everything else with 403.
var egress = &egressProxy{}

type egressProxy struct {
	socket string
	mu     sync.Mutex
	// node and hostPort: the kubelet VM's, the one boot kube-apiserver
	// reaches the kubelet of (kubeletForward).
	node     string
	hostPort int
}

// egressConfig writes kube-apiserver's EgressSelectorConfiguration for the
// proxy, starts the proxy and returns the flag that points kube-apiserver at it.
func startEgress(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	egress.socket = filepath.Join(dir, "egress.sock")
	l, err := net.Listen("unix", egress.socket)
	if err != nil {
		return "", err
	}
	go egress.serve(l)
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
`, egress.socket)
	if err := os.WriteFile(config, []byte(data), 0o600); err != nil {
		return "", err
	}
	return "--egress-selector-config-file " + config, nil
}

// kubeletForward, for the boot that checks kubectl logs and exec
// (servingCSR), forwards a free host port to the VM's kubelet and makes the
// proxy send the node's kubelet connections there. Other boots get none. Only
// one boot can have it: the VMs run at once and every one of them is QEMU's
// 10.0.2.15, so a CONNECT to that address names no VM.
func kubeletForward(b boot) ([]nodevm.HostForward, error) {
	if !b.servingCSR {
		return nil, nil
	}
	egress.mu.Lock()
	other := egress.node
	egress.mu.Unlock()
	if other != "" && other != b.node {
		return nil, fmt.Errorf("the kubelets of %s and %s would both be reached at 10.0.2.15: only one boot may check the serving CSR", other, b.node)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	egress.mu.Lock()
	egress.node, egress.hostPort = b.node, port
	egress.mu.Unlock()
	return []nodevm.HostForward{{HostPort: port, GuestPort: kubeletPort}}, nil
}

// kubeletAddr is the host address of the kubelet VM's kubelet.
func kubeletAddr() string {
	egress.mu.Lock()
	defer egress.mu.Unlock()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(egress.hostPort))
}

func (p *egressProxy) serve(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *egressProxy) handle(c net.Conn) {
	defer func() { _ = c.Close() }()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	if req.Method != http.MethodConnect {
		p.refuse(c, req.Method+" "+req.RequestURI, "not a CONNECT")
		return
	}
	target := req.Host
	to, why := p.route(target)
	if to == "" {
		p.refuse(c, target, why)
		return
	}
	up, err := net.DialTimeout("tcp", to, 10*time.Second)
	if err != nil {
		_, _ = fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		if host, _, _ := net.SplitHostPort(target); osmStopped.Load() && (host == "localhost" || host == "127.0.0.1") {
			osmStoppedDials.Add(1) // osm-apiserver, stopped by the test: counted, not logged one by one
			return
		}
		progress("egress: CONNECT %s: %v", target, err)
		return
	}
	defer func() { _ = up.Close() }()
	if _, err := fmt.Fprintf(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, br); closeWrite(up); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); closeWrite(c); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

func (p *egressProxy) refuse(c net.Conn, target, why string) {
	progress("egress: refused CONNECT %s: %s", target, why)
	_, _ = fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
}

// route says where a CONNECT to target goes ("" and why not when nowhere).
func (p *egressProxy) route(target string) (string, string) {
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
	if port != strconv.Itoa(kubeletPort) {
		return "", "not a kubelet's port"
	}
	p.mu.Lock()
	node, hostPort := p.node, p.hostPort
	p.mu.Unlock()
	if node == "" || env.kube == nil {
		return "", "no VM's kubelet is reachable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := env.kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Sprintf("Node %s: %v", node, err)
	}
	if !slices.Contains(nodeAddresses(n, corev1.NodeInternalIP), host) {
		return "", "not an InternalIP of Node " + node + ", the VM whose kubelet kube-apiserver reaches"
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
