package facts

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

type endpoint struct {
	address string
	ready   *bool // nil: unknown, which means ready
}

// kubernetesSlice is an EndpointSlice of default/kubernetes named name, with
// a port named portName.
func kubernetesSlice(name string, family discoveryv1.AddressType, portName string, port int32, endpoints ...endpoint) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: name,
			Labels: map[string]string{discoveryv1.LabelServiceName: KubernetesService}},
		AddressType: family,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(portName), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for _, e := range endpoints {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{e.address}, Conditions: discoveryv1.EndpointConditions{Ready: e.ready}})
	}
	return s
}

func ready(a string) endpoint    { return endpoint{a, ptr.To(true)} }
func notReady(a string) endpoint { return endpoint{a, ptr.To(false)} }

var kubeconfig = &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("kubeconfig-ca")}}

// Each source, and the order they are tried in.
func TestChooseAPIServer(t *testing.T) {
	cm := clusterInfoCM(withCA("Y2Etb25l")) // server https://10.0.0.1:6443, CA "ca-one"
	slice := kubernetesSlice("kubernetes", discoveryv1.AddressTypeIPv4, "https", 6443, ready("192.168.1.10"))
	inCluster := &rest.Config{Host: "https://10.96.0.1:443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("kubeconfig-ca")}}
	for _, c := range []struct {
		name               string
		in                 apiServerInputs
		server, ca, source string
		err                string
	}{
		{name: "cluster-info first", in: apiServerInputs{clusterInfo: cm, slices: []*discoveryv1.EndpointSlice{slice}, kubeconfig: kubeconfig},
			server: "https://10.0.0.1:6443", ca: "ca-one", source: "cluster-info"},
		{name: "the flag overrides cluster-info, whose CA stays", in: apiServerInputs{clusterInfo: cm, flag: "https://api.example:6443", slices: []*discoveryv1.EndpointSlice{slice}, kubeconfig: kubeconfig},
			server: "https://api.example:6443", ca: "ca-one", source: "flag"},
		{name: "the flag without cluster-info: the kubeconfig's CA", in: apiServerInputs{flag: "https://api.example:6443", slices: []*discoveryv1.EndpointSlice{slice}, kubeconfig: inCluster, inCluster: true},
			server: "https://api.example:6443", ca: "kubeconfig-ca", source: "flag"},
		{name: "the endpoints before the kubeconfig", in: apiServerInputs{slices: []*discoveryv1.EndpointSlice{slice}, kubeconfig: kubeconfig},
			server: "https://192.168.1.10:6443", ca: "kubeconfig-ca", source: "kubernetes-endpoints"},
		{name: "the endpoints, in a pod", in: apiServerInputs{slices: []*discoveryv1.EndpointSlice{slice}, kubeconfig: inCluster, inCluster: true},
			server: "https://192.168.1.10:6443", ca: "kubeconfig-ca", source: "kubernetes-endpoints"},
		{name: "the kubeconfig last", in: apiServerInputs{kubeconfig: kubeconfig},
			server: "https://127.0.0.1:6443", ca: "kubeconfig-ca", source: "kubeconfig"},
		{name: "a slice without an https port is no endpoint", in: apiServerInputs{kubeconfig: kubeconfig,
			slices: []*discoveryv1.EndpointSlice{kubernetesSlice("kubernetes", discoveryv1.AddressTypeIPv4, "http", 80, ready("192.168.1.10"))}},
			server: "https://127.0.0.1:6443", ca: "kubeconfig-ca", source: "kubeconfig"},
		{name: "never the in-cluster Service address", in: apiServerInputs{kubeconfig: inCluster, inCluster: true},
			err: "the kubeconfig's server https://10.96.0.1:443 is an in-cluster Service address"},
		{name: "never a Service's DNS name", in: apiServerInputs{kubeconfig: &rest.Config{Host: "https://kubernetes.default.svc", TLSClientConfig: kubeconfig.TLSClientConfig}},
			err: "no API server address nodes can reach"},
		{name: "a bad cluster-info is an error, not a fall-through", in: apiServerInputs{clusterInfo: clusterInfoCM("{"), slices: []*discoveryv1.EndpointSlice{slice}, kubeconfig: kubeconfig},
			err: "configmap kube-public/cluster-info: not a kubeconfig"},
		{name: "no CA", in: apiServerInputs{slices: []*discoveryv1.EndpointSlice{slice}, kubeconfig: &rest.Config{Host: "https://127.0.0.1:6443"}},
			err: "no CA for nodes"},
		{name: "an unreadable CA file is named by its flag, not its path", in: apiServerInputs{kubeconfig: &rest.Config{Host: "https://127.0.0.1:6443",
			TLSClientConfig: rest.TLSClientConfig{CAFile: "/secret/path/ca.crt"}}},
			err: "failed to read the CA file of the kubeconfig"},
	} {
		t.Run(c.name, func(t *testing.T) {
			server, ca, source, err := chooseAPIServer(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "/secret/path") {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if server != c.server || ca != c.ca || string(source) != c.source {
				t.Errorf("got %s, %q, %s; want %s, %q, %s", server, ca, source, c.server, c.ca, c.source)
			}
		})
	}
}

// One endpoint of kube-apiserver: a ready one, the same whatever the order,
// at the port of its slice, IPv6 bracketed.
func TestEndpointServer(t *testing.T) {
	v4 := discoveryv1.AddressTypeIPv4
	for _, c := range []struct {
		name   string
		slices []*discoveryv1.EndpointSlice
		want   string
	}{
		{name: "the ready one", want: "https://10.0.0.9:6443", slices: []*discoveryv1.EndpointSlice{
			kubernetesSlice("kubernetes", v4, "https", 6443, notReady("10.0.0.1"), ready("10.0.0.9"))}},
		{name: "unknown readiness is ready", want: "https://10.0.0.9:6443", slices: []*discoveryv1.EndpointSlice{
			kubernetesSlice("kubernetes", v4, "https", 6443, notReady("10.0.0.1"), endpoint{address: "10.0.0.9"})}},
		{name: "the lowest address, numerically", want: "https://10.0.0.9:443", slices: []*discoveryv1.EndpointSlice{
			kubernetesSlice("kubernetes", v4, "https", 443, ready("10.0.0.10"), ready("10.0.0.9"), ready("10.0.1.1"))}},
		{name: "the same, reordered", want: "https://10.0.0.9:443", slices: []*discoveryv1.EndpointSlice{
			kubernetesSlice("kubernetes", v4, "https", 443, ready("10.0.1.1"), ready("10.0.0.9"), ready("10.0.0.10"))}},
		{name: "none ready: one anyway", want: "https://10.0.0.1:6443", slices: []*discoveryv1.EndpointSlice{
			kubernetesSlice("kubernetes", v4, "https", 6443, notReady("10.0.0.2"), notReady("10.0.0.1"))}},
		{name: "IPv6 bracketed", want: "https://[fd00::1]:6443", slices: []*discoveryv1.EndpointSlice{
			kubernetesSlice("kubernetes", discoveryv1.AddressTypeIPv6, "https", 6443, ready("fd00::2"), ready("fd00::1"))}},
		{name: "dual stack: IPv4 first", want: "https://192.168.0.5:6443", slices: []*discoveryv1.EndpointSlice{
			kubernetesSlice("kubernetes-v6", discoveryv1.AddressTypeIPv6, "https", 6443, ready("fd00::1")),
			kubernetesSlice("kubernetes", v4, "https", 6443, ready("192.168.0.5"))}},
		{name: "a ready IPv6 endpoint before a not ready IPv4 one", want: "https://[fd00::1]:6443", slices: []*discoveryv1.EndpointSlice{
			kubernetesSlice("kubernetes", v4, "https", 6443, notReady("192.168.0.5")),
			kubernetesSlice("kubernetes-v6", discoveryv1.AddressTypeIPv6, "https", 6443, ready("fd00::1"))}},
		{name: "each slice its own port", want: "https://10.0.0.2:8443", slices: []*discoveryv1.EndpointSlice{
			kubernetesSlice("a", v4, "https", 6443, notReady("10.0.0.1")),
			kubernetesSlice("b", v4, "https", 8443, ready("10.0.0.2"))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := endpointServer(c.slices)
			if !ok || got != c.want {
				t.Errorf("got %q, %v; want %q", got, ok, c.want)
			}
		})
	}
	if got, ok := endpointServer([]*discoveryv1.EndpointSlice{kubernetesSlice("kubernetes", v4, "https", 6443)}); ok {
		t.Errorf("a slice without endpoints gave %q", got)
	}
}

func TestValidateNodeAPIServer(t *testing.T) {
	for _, good := range []string{"https://api.example:6443", "https://10.0.0.1", "https://[fd00::1]:443"} {
		if err := ValidateNodeAPIServer(good); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
	for _, bad := range []string{"", "http://api.example:6443", "api.example:6443", "https://:6443", "https://user:pw@api.example",
		"https://api.example/path", "https://api.example:6443/", "https://api.example?x=1", "https://api.example:99999", "https://api.example:port"} {
		if err := ValidateNodeAPIServer(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := NewSource(Config{Client: machinecontrollertest.NewClientset(), Fallback: kubeconfig, NodeAPIServer: "http://x"}); err == nil {
		t.Error("NewSource accepted a bad --node-api-server")
	}
}

// A change of kube-apiserver's endpoints is a change of the facts; so are a
// cluster-info that appears (it wins) and the last endpoint gone (the
// kubeconfig, or in a pod an error and the last good facts).
func TestSourceFollowsTheEndpoints(t *testing.T) {
	client := machinecontrollertest.NewClientset(kubernetesSlice("kubernetes", discoveryv1.AddressTypeIPv4, "https", 6443, ready("192.168.1.10")))
	s, err := NewSource(Config{Client: client, Fallback: kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 10)
	s.OnChange(func() { changed <- struct{}{} })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(ctx)
	waitFor(t, "the first facts", s.HasSynced)
	want := func(step, server string, source osm.APIServerSource) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no change published", step)
		}
		if f := s.Current(); f.Cluster.ServerURL != server || f.ServerSource != source || *f.APIServer() != (osm.APIServerStatus{URL: server, Source: source}) {
			t.Fatalf("%s: facts %s from %s, want %s from %s", step, f.Cluster.ServerURL, f.ServerSource, server, source)
		}
	}
	if f := s.Current(); f.Cluster.ServerURL != "https://192.168.1.10:6443" || f.ServerSource != osm.APIServerFromEndpoints || f.Cluster.CACert != "kubeconfig-ca" {
		t.Fatalf("first facts %+v", f)
	}
	first := s.Current()

	slices := client.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault)
	if _, err := slices.Update(ctx, kubernetesSlice("kubernetes", discoveryv1.AddressTypeIPv4, "https", 6443,
		notReady("192.168.1.10"), ready("192.168.1.11")), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want("endpoint not ready", "https://192.168.1.11:6443", osm.APIServerFromEndpoints)
	if s.Current().Hash() == first.Hash() || s.Current().Version() == first.Version() {
		t.Error("another server, the same hash or version")
	}
	if _, err := client.CoreV1().ConfigMaps(metav1.NamespacePublic).Create(ctx, clusterInfoCM(withCA("Y2Etb25l")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want("cluster-info published", "https://10.0.0.1:6443", osm.APIServerFromClusterInfo)
	if err := client.CoreV1().ConfigMaps(metav1.NamespacePublic).Delete(ctx, ClusterInfoName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want("cluster-info deleted", "https://192.168.1.11:6443", osm.APIServerFromEndpoints)
	if err := slices.Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want("slice deleted", "https://127.0.0.1:6443", osm.APIServerFromKubeconfig)
}

// In a pod without cluster-info, endpoints or flag there is no address for
// nodes: no facts, and an error that says so (the OSCs show it).
func TestSourceInClusterWithoutEndpoints(t *testing.T) {
	client := machinecontrollertest.NewClientset()
	s, err := NewSource(Config{Client: client, FallbackInCluster: true,
		Fallback: &rest.Config{Host: "https://10.96.0.1:443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca")}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(ctx)
	waitFor(t, "an error", func() bool { return s.Err() != nil })
	var noServer *NoAPIServerError
	if s.HasSynced() || !errors.As(s.Err(), &noServer) {
		t.Fatalf("facts %+v, err %v", s.Current(), s.Err())
	}
	if _, err := client.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).Create(ctx,
		kubernetesSlice("kubernetes", discoveryv1.AddressTypeIPv6, "https", 6443, ready("fd00::1")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the facts", s.HasSynced)
	if f := s.Current(); f.Cluster.ServerURL != "https://[fd00::1]:6443" || f.ServerSource != osm.APIServerFromEndpoints || s.Err() != nil {
		t.Errorf("facts %+v, err %v", f, s.Err())
	}
}

// The flags alone: --cluster-info-kubeconfig is cluster-info, and
// --node-api-server wins over it; nothing is watched.
func TestStaticSources(t *testing.T) {
	cluster := render.ClusterInfo{ServerURL: "https://10.0.0.1:6443", CACert: "ca"}
	for _, c := range []struct {
		flag, server string
		source       osm.APIServerSource
	}{
		{"", "https://10.0.0.1:6443", osm.APIServerFromClusterInfo},
		{"https://api.example:6443", "https://api.example:6443", osm.APIServerFromFlag},
	} {
		s, err := NewSource(Config{Cluster: cluster, NodeAPIServer: c.flag})
		if err != nil {
			t.Fatal(err)
		}
		if f := s.Current(); f == nil || f.Cluster.ServerURL != c.server || f.ServerSource != c.source || len(s.informers()) != 0 {
			t.Errorf("flag %q: facts %+v", c.flag, f)
		}
	}
}
