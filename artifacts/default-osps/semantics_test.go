package defaultosps

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// checkBootstrapFiles checks what the bootstrap payload must carry: the
// cluster CA for verified TLS and the script that fetches the provisioning
// Secret with the fetch token, once.
func checkBootstrapFiles(t *testing.T, files []payloadFile, ca string) {
	t.Helper()
	byPath := filesByPath(files)
	script := byPath["/opt/bin/osm-bootstrap"]
	for _, want := range []string{
		"--cacert ",
		"Authorization: Bearer " + fetchToken,
		"url='" + serverURL + "/apis/osm.k8c.io/v1alpha1/namespaces/kube-system/machinejoins'",
		`"kind\":\"MachineJoin\"`,
		"/var/lib/osm/bootstrap.done",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("bootstrap: osm-bootstrap does not contain %q", want)
		}
	}
	// machine-controller replaces the placeholder in the user-data; the
	// file must not be base64-encoded there.
	if got := strings.TrimSpace(byPath["/etc/osm/machine-name"]); got != "<MACHINE_NAME>" {
		t.Errorf("bootstrap: /etc/osm/machine-name is %q, want the placeholder machine-controller replaces", got)
	}
	var caFile string
	for path, content := range byPath {
		if strings.HasSuffix(path, "ca.crt") {
			caFile = content
		}
	}
	if strings.TrimSpace(caFile) != strings.TrimSpace(ca) {
		t.Errorf("bootstrap: the cluster CA file is %q, want the cluster CA", caFile)
	}
}

// checkProvisioningFiles checks that the kubelet and containerd get the
// settings of the render input and the MachineDeployment.
func checkProvisioningFiles(t *testing.T, files []payloadFile, dualStack, external bool) {
	t.Helper()
	byPath := filesByPath(files)
	var kc struct {
		ClusterDNS               []string          `json:"clusterDNS"`
		MaxPods                  int               `json:"maxPods"`
		FeatureGates             map[string]bool   `json:"featureGates"`
		ContainerRuntimeEndpoint string            `json:"containerRuntimeEndpoint"`
		KubeReserved             map[string]string `json:"kubeReserved"`
		EvictionHard             map[string]string `json:"evictionHard"`
		ContainerLogMaxSize      string            `json:"containerLogMaxSize"`
	}
	if err := yaml.Unmarshal([]byte(byPath["/etc/kubernetes/kubelet.conf"]), &kc); err != nil {
		t.Fatalf("provisioning: kubelet.conf: %v", err)
	}
	switch {
	case len(kc.ClusterDNS) != 1 || kc.ClusterDNS[0] != "10.96.0.10":
		t.Errorf("provisioning: kubelet clusterDNS = %q, want [10.96.0.10]", kc.ClusterDNS)
	case kc.MaxPods != 150:
		t.Errorf("provisioning: kubelet maxPods = %d, want the MD's 150", kc.MaxPods)
	case !kc.FeatureGates["GracefulNodeShutdown"]:
		t.Errorf("provisioning: kubelet featureGates = %v, want GracefulNodeShutdown", kc.FeatureGates)
	case kc.ContainerRuntimeEndpoint != "unix:///run/containerd/containerd.sock":
		t.Errorf("provisioning: kubelet containerRuntimeEndpoint = %q", kc.ContainerRuntimeEndpoint)
	case kc.KubeReserved["memory"] == "" || kc.EvictionHard["memory.available"] == "" || kc.ContainerLogMaxSize == "":
		t.Errorf("provisioning: kubelet reservations, eviction or log rotation missing: %+v", kc)
	}

	unit := byPath["/etc/systemd/system/kubelet.service"]
	for flag, want := range map[string]bool{
		"--register-with-taints=dedicated=infra:NoSchedule": true,
		"--cloud-provider=external":                         external,
		"--node-ip=":                                        !(dualStack && external),
		"--bootstrap-kubeconfig=":                           true,
	} {
		if strings.Contains(unit, flag) != want {
			t.Errorf("provisioning: kubelet.service has %s: %v, want %v", flag, !want, want)
		}
	}
	sysctl := byPath["/etc/sysctl.d/90-kubernetes.conf"]
	if strings.Contains(sysctl, "net.ipv6.conf.all.forwarding = 1") != dualStack {
		t.Errorf("provisioning: IPv6 forwarding is set: %v, want %v", !dualStack, dualStack)
	}
	if toml := byPath["/etc/containerd/config.toml"]; !strings.Contains(toml, "registry.internal:5000/pause:3.10") {
		t.Errorf("provisioning: containerd config does not use the pause image:\n%s", toml)
	}
	if setup := byPath["/opt/bin/osm-setup"]; strings.Contains(setup, "Authorization:") || strings.Contains(setup, "/secrets/") ||
		!strings.Contains(setup, "[ ! -s /etc/kubernetes/bootstrap-kubelet.conf ]") {
		t.Error("provisioning: osm-setup reads a Secret, or does not check for the bootstrap kubeconfig of the MachineJoin's answer")
	}
	if _, ok := byPath["/etc/kubernetes/cloud-config"]; !ok {
		t.Error("provisioning: no /etc/kubernetes/cloud-config")
	}
}

func filesByPath(files []payloadFile) map[string]string {
	m := make(map[string]string, len(files))
	for _, f := range files {
		m[f.path] = f.content
	}
	return m
}
