package defaultosps

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

func osp(name, version string, ours bool) *ospv1alpha1.OperatingSystemProfile {
	p := &ospv1alpha1.OperatingSystemProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name},
		Spec:       ospv1alpha1.OperatingSystemProfileSpec{OSName: "ubuntu", OSVersion: "24.04", Version: version},
	}
	if ours {
		p.Labels = map[string]string{machinecontroller.ManagedByLabel: machinecontroller.ManagedByValue}
	}
	return p
}

func TestInstall(t *testing.T) {
	tests := []struct {
		name        string
		existing    []*ospv1alpha1.OperatingSystemProfile
		wantVersion string
		wantErr     string
	}{
		{name: "missing profile is created", wantVersion: "v2"},
		{name: "our older profile is updated", existing: []*ospv1alpha1.OperatingSystemProfile{osp("osp-ubuntu", "v1", true)}, wantVersion: "v2"},
		{name: "user's profile of the same name is kept", existing: []*ospv1alpha1.OperatingSystemProfile{osp("osp-ubuntu", "v1", false)}, wantVersion: "v1"},
		{name: "our current profile is kept", existing: []*ospv1alpha1.OperatingSystemProfile{osp("osp-ubuntu", "v2", true)}, wantVersion: "v2"},
		{
			name: "changed spec without a new version is refused",
			existing: []*ospv1alpha1.OperatingSystemProfile{func() *ospv1alpha1.OperatingSystemProfile {
				p := osp("osp-ubuntu", "v2", true)
				p.Spec.OSVersion = "22.04"
				return p
			}()},
			wantVersion: "v2",
			wantErr:     "same version v2",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewSimpleClientset()
			for _, p := range tc.existing {
				if _, err := client.OperatingsystemmanagerV1alpha1().OperatingSystemProfiles(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			embedded := osp("osp-ubuntu", "v2", false)
			i := &Installer{Client: client.OperatingsystemmanagerV1alpha1(), Namespace: "kube-system",
				Profiles: []*ospv1alpha1.OperatingSystemProfile{embedded}}
			err := i.Install(context.Background())
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Install() error %v, want %q", err, tc.wantErr)
			}
			got, err := client.OperatingsystemmanagerV1alpha1().OperatingSystemProfiles("kube-system").Get(context.Background(), "osp-ubuntu", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Spec.Version != tc.wantVersion {
				t.Errorf("version %q, want %q", got.Spec.Version, tc.wantVersion)
			}
			if embedded.Labels != nil {
				t.Errorf("Install mutated the embedded profile")
			}
		})
	}
}
