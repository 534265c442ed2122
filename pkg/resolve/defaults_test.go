package resolve

import (
	"context"
	"errors"
	"strings"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
)

// unnamed returns an MD that names no profile, on providerSpec.
func unnamed(providerSpec string) *clusterv1alpha1.MachineDeployment {
	m := md("")
	delete(m.Annotations, machinecontroller.AnnotationOSP)
	m.Spec.Template.Spec.ProviderSpec.Value.Raw = []byte(providerSpec)
	return m
}

// An MD that names no profile renders from its operating system's default, and
// its output says so; without a default, the output is the error that says why.
func TestDefaultedProfile(t *testing.T) {
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))

	out := f.resolver.Resolve(context.Background(), unnamed(`{"cloudProvider":"aws","operatingSystem":"ubuntu"}`))
	want := osm.ProfileReference{Namespace: "kube-system", Name: "osp-ubuntu", Version: "v1.0.0", Defaulted: true}
	if out.Err != nil || out.Profile != want {
		t.Errorf("ubuntu: profile %+v, error %v; want %+v", out.Profile, out.Err, want)
	}

	out = f.resolver.Resolve(context.Background(), unnamed(`{"cloudProvider":"aws","operatingSystem":"rhel"}`))
	if out.Err == nil || !strings.Contains(out.Err.Error(), "operatingsystemprofile kube-system/osp-rhel not found (the default for the MD's operating system") {
		t.Errorf("rhel without osp-rhel: error %v", out.Err)
	}

	before := f.renderer.calls.Load()
	out = f.resolver.Resolve(context.Background(), unnamed(`{"cloudProvider":"aws","operatingSystem":"sles"}`))
	if _, ok := errors.AsType[*machinecontroller.NoDefaultProfileError](out.Err); !ok {
		t.Errorf("sles: error %v, want a *NoDefaultProfileError", out.Err)
	}
	if f.renderer.calls.Load() != before {
		t.Error("an MD without a profile was rendered")
	}
}

// The default is that of the operating system of the template the payloads are
// rendered from: while an MD waits for its next revision, its revision's.
func TestDefaultedProfileFollowsTheRevisionsTemplate(t *testing.T) {
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"), osp("kube-system", "osp-flatcar", "v1.0.0", "1"))
	informer := informers.NewMachineSets(&cache.ListWatch{})
	f.resolver.cfg.Revisions = machines.NewRevisionTemplates(informer.GetIndexer())
	m := unnamed(`{"cloudProvider":"aws","operatingSystem":"ubuntu"}`)
	if err := informer.GetIndexer().Add(machineSet(m, "1", `{"cloudProvider":"aws","operatingSystem":"ubuntu"}`)); err != nil {
		t.Fatal(err)
	}
	// The MD moves to Flatcar, paused: revision 1 stays Ubuntu's.
	m.Spec.Template.Spec.ProviderSpec.Value.Raw = []byte(`{"cloudProvider":"aws","operatingSystem":"flatcar"}`)
	out := f.resolver.Resolve(context.Background(), m)
	if out.Err != nil || out.Profile.Name != "osp-ubuntu" || out.Waiting != waitingForRevision {
		t.Errorf("profile %+v, waiting %q, error %v; want osp-ubuntu, waiting for the next revision", out.Profile, out.Waiting, out.Err)
	}
}
