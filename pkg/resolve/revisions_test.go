package resolve

import (
	"context"
	"strings"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// providerSpecRenderer writes the providerSpec it renders from into the payload.
func providerSpecRenderer(in render.Input) (*render.Result, error) {
	spec := string(in.MachineDeployment.Spec.Template.Spec.ProviderSpec.Value.Raw)
	return &render.Result{
		Config:       osm.OperatingSystemConfigSpec{OSName: "ubuntu"},
		Bootstrap:    render.Payload{Format: osm.PayloadFormatCloudInit, UserData: []byte("#cloud-config\n" + spec)},
		Provisioning: render.Payload{Format: osm.PayloadFormatCloudInit, UserData: []byte("#cloud-config\n")},
	}, nil
}

func machineSet(md *clusterv1alpha1.MachineDeployment, revision, providerSpec string) *clusterv1alpha1.MachineSet {
	ms := &clusterv1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{
		Namespace: md.Namespace, Name: md.Name + "-" + revision, UID: types.UID("ms-" + string(md.UID) + "-" + revision),
		ResourceVersion: "1", Annotations: map[string]string{machinecontroller.AnnotationMDRevision: revision},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(md, clusterv1alpha1.SchemeGroupVersion.WithKind("MachineDeployment"))},
	}}
	ms.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(providerSpec)}
	return ms
}

// A Machine's user-data must be rendered from the template of its
// MachineSet's revision: when the MD's template changed without a new
// revision (a paused MD, or before machine-controller bumps it), the output
// stays that of the revision's template and says what it waits for.
func TestRevisionTemplate(t *testing.T) {
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	f.resolver.cfg.Render = providerSpecRenderer
	informer := informers.NewMachineSets(&cache.ListWatch{})
	f.resolver.cfg.Revisions = machines.NewRevisionTemplates(informer.GetIndexer())
	resolve := func(m *clusterv1alpha1.MachineDeployment) (payload, waiting string) {
		t.Helper()
		out := f.resolver.Resolve(context.Background(), m)
		if out.Err != nil {
			t.Fatal(out.Err)
		}
		return userData(t, out.Bootstrap), out.Waiting
	}

	m := md("osp-ubuntu") // revision 1, providerSpec {"cloudProvider":"aws"}
	if got, waiting := resolve(m); !strings.Contains(got, `"aws"`) || waiting != "" {
		t.Fatalf("without MachineSets: %q, waiting %q", got, waiting)
	}
	// machine-controller created revision 1's MachineSet from the same template.
	rev1 := machineSet(m, "1", `{"cloudProvider":"aws"}`)
	if err := informer.GetIndexer().Add(rev1); err != nil {
		t.Fatal(err)
	}
	if got, waiting := resolve(m); !strings.Contains(got, `"aws"`) || waiting != "" {
		t.Fatalf("with revision 1's MachineSet: %q, waiting %q", got, waiting)
	}

	// The template changes (paused, or before the bump): revision 1's stays.
	changed := m.DeepCopy()
	changed.ResourceVersion = "11"
	changed.Spec.Template.Spec.ProviderSpec.Value.Raw = []byte(`{"cloudProvider":"azure"}`)
	if got, waiting := resolve(changed); !strings.Contains(got, `"aws"`) || waiting != waitingForRevision {
		t.Fatalf("template changed, same revision: %q, waiting %q; want revision 1's template", got, waiting)
	}

	// machine-controller bumps the revision: its MachineSet not seen yet, then seen.
	bumped := changed.DeepCopy()
	bumped.ResourceVersion = "12"
	bumped.Annotations[machinecontroller.AnnotationMDRevision] = "2"
	if got, waiting := resolve(bumped); !strings.Contains(got, `"azure"`) || waiting != "" {
		t.Fatalf("revision 2 before its MachineSet: %q, waiting %q", got, waiting)
	}
	if err := informer.GetIndexer().Add(machineSet(m, "2", `{"cloudProvider":"azure"}`)); err != nil {
		t.Fatal(err)
	}
	if got, waiting := resolve(bumped); !strings.Contains(got, `"azure"`) || waiting != "" {
		t.Fatalf("revision 2: %q, waiting %q", got, waiting)
	}
	// Another MD's MachineSets are not this one's.
	other := md("osp-ubuntu")
	other.Name, other.UID = "other", "other-uid"
	if got, waiting := resolve(other); !strings.Contains(got, `"aws"`) || waiting != "" {
		t.Fatalf("another MD: %q, waiting %q", got, waiting)
	}
}
