package e2e

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/defaultosps"
)

// TestDefaultOSPsInstall installs the embedded profiles through the real CRD
// (schema and immutability rule included) and never overwrites a user's one.
func TestDefaultOSPsInstall(t *testing.T) {
	ns := syncerNamespace(t)
	ctx := context.Background()
	profiles := env.osm.OperatingsystemmanagerV1alpha1().OperatingSystemProfiles(ns)
	mine := e2eProfile(t, "osp-ubuntu", "v0.0.1")
	mine.Namespace = ns
	if _, err := profiles.Create(ctx, mine, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	installer, err := defaultosps.NewInstaller(env.osm.OperatingsystemmanagerV1alpha1(), ns)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // The second run finds everything in place.
		if err := installer.Install(ctx); err != nil {
			t.Fatal(err)
		}
	}
	list, err := profiles.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != len(installer.Profiles) {
		t.Errorf("%d profiles in %s, want %d", len(list.Items), ns, len(installer.Profiles))
	}
	got, err := profiles.Get(ctx, "osp-ubuntu", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Version != "v0.0.1" || got.Spec.OSVersion != mine.Spec.OSVersion {
		t.Errorf("the user's osp-ubuntu was overwritten: version %s", got.Spec.Version)
	}
}
