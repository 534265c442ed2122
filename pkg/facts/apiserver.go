package facts

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/rest"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// KubernetesService is the Service of kube-apiserver itself, in
// metav1.NamespaceDefault, and the name of the EndpointSlice kube-apiserver
// keeps for it: it lists kube-apiserver's own addresses, which nodes reach
// before they joined (unlike the Service's ClusterIP).
const KubernetesService = "kubernetes"

// ValidateNodeAPIServer checks a --node-api-server URL: https, a host, an
// optional port, nothing else.
func ValidateNodeAPIServer(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	switch {
	case u.Scheme != "https":
		return fmt.Errorf("%q: want https://host[:port]", s)
	case u.Hostname() == "":
		return fmt.Errorf("%q: no host", s)
	// Nodes append paths to it: no path, not even "/".
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Path != "" || u.Opaque != "":
		return fmt.Errorf("%q: want https://host[:port], without user, path, query or fragment", s)
	}
	if p := u.Port(); p != "" {
		if _, err := net.LookupPort("tcp", p); err != nil {
			return fmt.Errorf("%q: bad port: %w", s, err)
		}
	}
	return nil
}

// apiServerInputs are what the API server address nodes are given is chosen from.
type apiServerInputs struct {
	clusterInfo *corev1.ConfigMap // kube-public/cluster-info; nil when there is none
	flag        string            // --node-api-server; "" when not set
	slices      []*discoveryv1.EndpointSlice
	kubeconfig  *rest.Config
	inCluster   bool // kubeconfig is the in-cluster configuration
}

// chooseAPIServer returns the API server URL and CA nodes are given, and
// where the URL came from: --node-api-server when set, else
// kube-public/cluster-info, else an endpoint of default/kubernetes, else the
// kubeconfig's server unless it is an in-cluster Service address, which a
// node cannot reach before it joined. The CA is cluster-info's, else the
// kubeconfig's.
func chooseAPIServer(in apiServerInputs) (server, ca string, source osm.APIServerSource, err error) {
	if in.clusterInfo != nil {
		if server, ca, err = ServerAndCA([]byte(in.clusterInfo.Data["kubeconfig"])); err != nil {
			return "", "", "", fmt.Errorf("configmap kube-public/cluster-info: %w", err)
		}
		source = osm.APIServerFromClusterInfo
	} else if ca, err = kubeconfigCA(in.kubeconfig); err != nil {
		return "", "", "", err
	}
	switch {
	case in.flag != "":
		return in.flag, ca, osm.APIServerFromFlag, nil
	case source != "":
		return server, ca, source, nil
	}
	if server, ok := endpointServer(in.slices); ok {
		return server, ca, osm.APIServerFromEndpoints, nil
	}
	if in.inCluster || inClusterServiceHost(in.kubeconfig.Host) {
		return "", "", "", &NoAPIServerError{Kubeconfig: in.kubeconfig.Host}
	}
	return in.kubeconfig.Host, ca, osm.APIServerFromKubeconfig, nil
}

// NoAPIServerError says there is no API server address nodes can reach. It
// names no secret: OSCs show it.
type NoAPIServerError struct {
	// Kubeconfig is the server of the kubeconfig, an in-cluster Service address.
	Kubeconfig string
}

func (e *NoAPIServerError) Error() string {
	return fmt.Sprintf("no API server address nodes can reach: kube-public/cluster-info does not exist, --node-api-server is not set, "+
		"the EndpointSlice %s/%s lists no endpoint with a port named https, and the kubeconfig's server %s is an in-cluster Service address, "+
		"which nodes cannot reach before they joined", corev1.NamespaceDefault, KubernetesService, e.Kubeconfig)
}

// kubeconfigCA is the CA of the client configuration.
func kubeconfigCA(config *rest.Config) (string, error) {
	caData := config.CAData
	if len(caData) == 0 && config.CAFile != "" {
		var err error
		if caData, err = os.ReadFile(config.CAFile); err != nil {
			// The path is the server's own business, not the error's.
			return "", errors.New("failed to read the CA file of the kubeconfig")
		}
	}
	if len(caData) == 0 {
		return "", errors.New("no CA for nodes: set --cluster-info-kubeconfig, publish kube-public/cluster-info, or use a kubeconfig with a CA")
	}
	return string(caData), nil
}

// inClusterServiceHost says whether the server URL names a Service by its
// DNS name (kubernetes, kubernetes.default, *.svc, *.svc.<domain>): no
// node resolves those before it joined.
func inClusterServiceHost(server string) bool {
	u, err := url.Parse(server)
	if err != nil {
		return false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return host == "kubernetes" || host == "kubernetes.default" || strings.HasSuffix(host, ".svc") || strings.Contains(host, ".svc.")
}

// endpointServer returns the URL of one of kube-apiserver's endpoints in
// slices, at the port named https of its slice: a ready one if there is any,
// and of those the first by address type (IPv4, IPv6, FQDN) and address, so
// that every replica picks the same one and a reordered slice changes nothing.
func endpointServer(eps []*discoveryv1.EndpointSlice) (string, bool) {
	type candidate struct {
		ready   bool
		family  int
		address string
		ip      netip.Addr
		port    int32
	}
	var all []candidate
	for _, s := range eps {
		port, ok := httpsPort(s)
		if !ok {
			continue
		}
		family := slices.Index([]discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN}, s.AddressType)
		if family < 0 {
			continue
		}
		for _, e := range s.Endpoints {
			if len(e.Addresses) == 0 {
				continue
			}
			// Addresses are fungible; consumers may use the first.
			c := candidate{
				ready:   e.Conditions.Ready == nil || *e.Conditions.Ready, // unknown means ready
				family:  family,
				address: e.Addresses[0],
				port:    port,
			}
			c.ip, _ = netip.ParseAddr(c.address)
			all = append(all, c)
		}
	}
	if len(all) == 0 {
		return "", false
	}
	best := slices.MinFunc(all, func(a, b candidate) int {
		switch {
		case a.ready != b.ready:
			if a.ready {
				return -1
			}
			return 1
		case a.family != b.family:
			return a.family - b.family
		case a.ip.IsValid() && b.ip.IsValid() && a.ip != b.ip:
			return a.ip.Compare(b.ip)
		case a.address != b.address:
			return strings.Compare(a.address, b.address)
		}
		return int(a.port - b.port)
	})
	// JoinHostPort brackets an IPv6 address.
	return "https://" + net.JoinHostPort(best.address, fmt.Sprint(best.port)), true
}

// httpsPort is the TCP port named https of a slice.
func httpsPort(s *discoveryv1.EndpointSlice) (int32, bool) {
	for _, p := range s.Ports {
		if p.Name != nil && *p.Name == "https" && p.Port != nil && *p.Port > 0 &&
			(p.Protocol == nil || *p.Protocol == corev1.ProtocolTCP) {
			return *p.Port, true
		}
	}
	return 0, false
}
