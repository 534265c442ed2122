package render_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"

	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// TestUpstreamKubeletAnnotations renders upstream's "Kubelet configuration
// with containerd" case (its osc_reconciler_test.go: the Ubuntu AWS case plus
// six kubelet-config annotations) and checks the kubelet configuration lines
// those annotations drive against upstream's golden
// osc-kubelet-configuration-containerd.yaml. Only these lines are compared: the
// stored golden comes from an older OSP whose other files differ from the
// default OSP the shared cases use.
func TestUpstreamKubeletAnnotations(t *testing.T) {
	in := caseInput(t, filepath.Join(upstreamDir(t), "cases", "ubuntu-aws-containerd"))
	md := in.MachineDeployment.DeepCopy()
	for k, v := range map[string]string{
		"ContainerLogMaxSize":  "300Mi",
		"ContainerLogMaxFiles": "30",
		"MaxPods":              "110",
		"SystemReserved":       "ephemeral-storage=30Gi,cpu=30m",
		"KubeReserved":         "ephemeral-storage=30Gi,cpu=30m",
		"EvictionHard":         "memory.available<30Mi",
	} {
		md.Annotations[machinecontroller.KubeletConfigAnnotationPrefix+k] = v
	}
	in.MachineDeployment = md
	res, err := render.NewRenderer().Render(in)
	if err != nil {
		t.Fatal(err)
	}
	var conf string
	for _, f := range res.Config.ProvisioningConfig.Files {
		if f.Path == "/etc/kubernetes/kubelet.conf" {
			conf = f.Content.Inline.Data
		}
	}
	// From upstream's golden, in its order.
	want := []string{
		"containerLogMaxSize: 300Mi\ncontainerLogMaxFiles: 30\n",
		"kubeReserved:\n  cpu: 30m\n  ephemeral-storage: 30Gi\nsystemReserved:\n  cpu: 30m\n  ephemeral-storage: 30Gi\nevictionHard:\n  memory.available: 30Mi\nmaxPods: 110\n",
	}
	for _, w := range want {
		if !strings.Contains(conf, w) {
			t.Errorf("kubelet.conf lacks upstream's\n%s\ngot:\n%s", w, conf)
		}
	}
}
