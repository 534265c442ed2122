// Package overlayexamples holds the worked examples of docs/overlays.md, one
// OperatingSystemProfileOverlay per file; its test renders each against the
// default profiles it names and keeps what it changes as golden files.
package overlayexamples

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	defaultosps "github.com/osm-apiserver/osm-apiserver/artifacts/default-osps"
	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/overlays"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/review"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestExamples renders every example against each default profile it names,
// for an MD it selects, and compares the review of what it changes (the
// output of `osm-apiserver render --diff`) with testdata/<example>.<profile>.golden.
func TestExamples(t *testing.T) {
	osps, err := defaultosps.Load()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "overlays.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(docs), "```yaml\n"+string(data)+"```\n") {
			t.Errorf("docs/overlays.md does not show %s as it is", file)
		}
		o, err := render.DecodeOverlay(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, osp := range osps {
			if !overlays.NamesProfile(o, profile(osp)) {
				continue
			}
			t.Run(strings.TrimSuffix(file, ".yaml")+"/"+osp.Name, func(t *testing.T) {
				got := renderExample(t, osp, o)
				golden(t, filepath.Join("testdata", strings.TrimSuffix(file, ".yaml")+"."+osp.Name+".golden"), got)
			})
		}
	}
}

// renderExample renders osp for an MD the overlay selects, without and with
// the overlay, and returns the review.
func renderExample(t *testing.T, osp *ospv1alpha1.OperatingSystemProfile, o *overlaysv1alpha1.OperatingSystemProfileOverlay) string {
	t.Helper()
	md := machineDeployment(t, osp, o)
	sel := &overlays.Selector{ServerNamespace: "kube-system"}
	if ok, err := sel.Selects(o, md); !ok || err != nil {
		t.Fatalf("the example does not select its MD: %t, %v", ok, err)
	}
	in := render.Input{
		OSP: osp, MachineDeployment: md,
		Cluster: render.ClusterInfo{ServerURL: "https://api.cluster.example.com:6443", CACert: "-----BEGIN CERTIFICATE-----\nCLUSTER\n-----END CERTIFICATE-----\n",
			BootstrapToken: "abcdef.0123456789abcdef", CloudInitGetterToken: "fetch-token"},
		Node: render.NodeOptions{ClusterDNSIPs: []string{"10.96.0.10"}, ContainerRuntime: "containerd", ExternalCloudProvider: true},
	}
	side := func(in render.Input) review.Side {
		r := render.NewRenderer()
		real, err := r.Render(in)
		if err != nil {
			t.Fatal(err)
		}
		in.View = true
		view, err := r.Render(in)
		return review.FromResults(real, view, err)
	}
	before := side(in)
	in.Overlays = []*overlaysv1alpha1.OperatingSystemProfileOverlay{o}
	after := side(in)
	if after.Err != "" {
		t.Fatalf("with the overlay: %s", after.Err)
	}
	rv := review.Compare(before, after, review.NewDiffer())
	rv.Namespace, rv.Name = md.Namespace, md.Name
	var b strings.Builder
	if err := review.WriteText(&b, &rv); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func profile(osp *ospv1alpha1.OperatingSystemProfile) machinecontroller.Profile {
	return machinecontroller.Profile{Namespace: osp.Namespace, Name: osp.Name}
}

// machineDeployment is an MD of osp on aws, or the first cloud it supports
// when not aws (a cloud added to a profile does not change the goldens), in
// the overlay's namespace, with the labels its selector asks for.
func machineDeployment(t *testing.T, osp *ospv1alpha1.OperatingSystemProfile, o *overlaysv1alpha1.OperatingSystemProfileOverlay) *clusterv1alpha1.MachineDeployment {
	t.Helper()
	osSpec := map[string]any{}
	if osp.Spec.OSName == ospv1alpha1.OperatingSystemFlatcar {
		osSpec["provisioningUtility"] = string(osp.Spec.ProvisioningUtility)
	}
	cloud := osp.Spec.SupportedCloudProviders[0].Name
	for _, c := range osp.Spec.SupportedCloudProviders {
		if c.Name == "aws" {
			cloud = c.Name
		}
	}
	raw, err := json.Marshal(map[string]any{
		"cloudProvider": string(cloud), "cloudProviderSpec": map[string]any{},
		"operatingSystem": string(osp.Spec.OSName), "operatingSystemSpec": osSpec,
		"sshPublicKeys": []string{"ssh-ed25519 AAAA example@osm"},
	})
	if err != nil {
		t.Fatal(err)
	}
	md := &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{
		Namespace: o.Namespace, Name: "workers",
		Annotations: map[string]string{
			"k8c.io/operating-system-profile":            osp.Name,
			"k8c.io/operating-system-profile-namespace":  osp.Namespace,
			"machinedeployment.clusters.k8s.io/revision": "1",
			// The sysctl example reads it.
			"v1.kubelet-config.machine-controller.kubermatic.io/MaxPods": "150",
		},
	}}
	if s := o.Spec.MachineDeploymentSelector; s != nil {
		md.Labels = s.MatchLabels
	}
	md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: raw}
	md.Spec.Template.Spec.Versions.Kubelet = "1.33.4"
	return md
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update to accept):\n%s", path, got)
	}
}
