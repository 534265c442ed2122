package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// fetchScript is the bootstrap file of the e2e profile that dials the API server.
const fetchScript = "/opt/bin/fetch-provisioning"

// TestNodeAPIServerAddress: without kube-public/cluster-info, nodes are
// given an endpoint of kube-apiserver from the EndpointSlice
// default/kubernetes, and follow it as it changes; --node-api-server wins
// over everything. The OSC's status says which address and where from, and
// the bootstrap payload dials it. The local cluster's kube-apiserver runs
// with --endpoint-reconciler-type=none, so the test writes the slice itself;
// it restores cluster-info, and with it the harness's server's facts, when
// it ends.
func TestNodeAPIServerAddress(t *testing.T) {
	ctx := testContext(t)
	const md = "e2e-ubuntu-aws"
	configMaps := env.kube.CoreV1().ConfigMaps(metav1.NamespacePublic)
	saved, savedConfig := clusterInfo(t)
	var clusterInfoServer string
	for _, c := range savedConfig.Clusters {
		clusterInfoServer = c.Server
	}
	// Cleanups run last-in first-out: this one last, after the slice is
	// gone and the harness's server runs without the flag again.
	t.Cleanup(func() {
		restored := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: "cluster-info",
			Labels: saved.Labels, Annotations: saved.Annotations}, Data: saved.Data}
		if _, err := configMaps.Create(context.Background(), restored, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Errorf("restoring cluster-info: %v", err)
		}
		nodesDial(t, md, clusterInfoServer, osmv1alpha1.APIServerFromClusterInfo)
	})
	if err := configMaps.Delete(ctx, "cluster-info", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The harness's server talks to 127.0.0.1, no in-cluster Service: its
	// kubeconfig's server is the last resort.
	start := time.Now()
	nodesDial(t, md, env.config.Host, osmv1alpha1.APIServerFromKubeconfig)
	t.Logf("cluster-info deleted: the kubeconfig's server after %s", time.Since(start).Round(time.Millisecond))

	slices := env.kube.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault)
	t.Cleanup(func() {
		if err := slices.Delete(context.Background(), "kubernetes", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting EndpointSlice default/kubernetes: %v", err)
		}
	})
	slice := kubernetesEndpointSlice(6443, map[string]bool{"192.0.2.20": false, "192.0.2.10": true, "192.0.2.30": true})
	if _, err := slices.Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	nodesDial(t, md, "https://192.0.2.10:6443", osmv1alpha1.APIServerFromEndpoints)
	t.Logf("EndpointSlice created: its endpoint after %s", time.Since(start).Round(time.Millisecond))
	if out := kubectl(t, "get", "osc", "-n", testNamespace, md, "-o", "wide"); !strings.Contains(out, "https://192.0.2.10:6443 (kubernetes-endpoints)") {
		t.Errorf("kubectl get osc -o wide shows no API server column:\n%s", out)
	}

	// That kube-apiserver goes; another one, on another port, is ready.
	current, err := slices.Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	updated := kubernetesEndpointSlice(7443, map[string]bool{"192.0.2.10": false, "192.0.2.11": true})
	updated.ResourceVersion = current.ResourceVersion
	if _, err := slices.Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	nodesDial(t, md, "https://192.0.2.11:7443", osmv1alpha1.APIServerFromEndpoints)
	t.Logf("EndpointSlice updated: the new endpoint after %s", time.Since(start).Round(time.Millisecond))

	// The flag overrides the slice (and would override cluster-info).
	const flag = "https://nodes.e2e.example:6443"
	t.Cleanup(func() {
		if err := startHarnessServer(serverArgs()); err != nil {
			t.Errorf("restarting the harness's osm-apiserver without --node-api-server: %v", err)
		}
	})
	if err := startHarnessServer(append(serverArgs(), "--node-api-server="+flag)); err != nil {
		t.Fatalf("restarting the harness's osm-apiserver with --node-api-server: %v", err)
	}
	nodesDial(t, md, flag, osmv1alpha1.APIServerFromFlag)
}

// kubernetesEndpointSlice is the slice kube-apiserver keeps for
// default/kubernetes, with the endpoints of ready (address: ready).
func kubernetesEndpointSlice(port int32, ready map[string]bool) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "kubernetes",
			Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes", discoveryv1.LabelManagedBy: "e2e"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for address, r := range ready {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{address},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(r)}})
	}
	return s
}

// nodesDial waits until MD md of the test namespace gives its nodes server:
// its OSC's status says so, with source, and so do its bootstrap, in the OSC
// and in the bootstrap payload Secret.
func nodesDial(t *testing.T, md, server string, source osmv1alpha1.APIServerSource) {
	t.Helper()
	want := server + "/api/v1/namespaces/cloud-init-settings/secrets/"
	eventually(t, time.Minute, func() error {
		osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(testNamespace).Get(context.Background(), md, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := osc.Status.APIServer; got == nil || *got != (osmv1alpha1.APIServerStatus{URL: server, Source: source}) {
			return fmt.Errorf("OSC %s: status.apiServer %+v, want %s from %s (renderError %q)", md, got, server, source, osc.Status.RenderError)
		}
		if script := fileData(t, osc.Spec.BootstrapConfig.Files, fetchScript); !strings.Contains(script, want) {
			return fmt.Errorf("OSC %s: %s does not dial %s:\n%s", md, fetchScript, server, script)
		}
		return nil
	})
	payloadSecret(t, testNamespace, md, "bootstrap", func(s *corev1.Secret) error {
		if script := cloudConfigFile(t, string(s.Data[machinecontroller.SecretDataKey]), fetchScript); !strings.Contains(script, want) {
			return fmt.Errorf("%s: %s does not dial %s", s.Name, fetchScript, server)
		}
		return nil
	})
}
