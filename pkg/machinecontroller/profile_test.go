package machinecontroller

import (
	"errors"
	"strings"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func profileMD(annotations map[string]string, providerSpec string) *clusterv1alpha1.MachineDeployment {
	md := &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "pool", Annotations: annotations}}
	if providerSpec != "" {
		md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(providerSpec)}
	}
	return md
}

func TestProfileOf(t *testing.T) {
	tests := []struct {
		name         string
		annotations  map[string]string
		providerSpec string
		want         Profile
		wantErr      string // a substring; "" for none
		noDefault    bool   // the error is a *NoDefaultProfileError
	}{
		{name: "named, in the default namespace", annotations: map[string]string{AnnotationOSP: "custom"},
			providerSpec: `{"operatingSystem":"sles"}`, want: Profile{Namespace: "kube-system", Name: "custom"}},
		{name: "named, in its own namespace", annotations: map[string]string{AnnotationOSP: "custom", AnnotationOSPNamespace: "osps"},
			want: Profile{Namespace: "osps", Name: "custom"}},
		{name: "ubuntu", providerSpec: `{"cloudProvider":"aws","operatingSystem":"ubuntu"}`,
			want: Profile{Namespace: "kube-system", Name: "osp-ubuntu", Defaulted: true}},
		{name: "an empty annotation is none, as upstream's webhook has it", annotations: map[string]string{AnnotationOSP: ""},
			providerSpec: `{"operatingSystem":"rhel"}`, want: Profile{Namespace: "kube-system", Name: "osp-rhel", Defaulted: true}},
		{name: "the namespace annotation alone does not move the default", annotations: map[string]string{AnnotationOSPNamespace: "osps"},
			providerSpec: `{"operatingSystem":"rockylinux"}`, want: Profile{Namespace: "kube-system", Name: "osp-rockylinux", Defaulted: true}},
		{name: "amzn2", providerSpec: `{"operatingSystem":"amzn2"}`, want: Profile{Namespace: "kube-system", Name: "osp-amzn2", Defaulted: true}},
		{name: "flatcar", providerSpec: `{"cloudProvider":"aws","operatingSystem":"flatcar","operatingSystemSpec":{"provisioningUtility":"cloud-init"}}`,
			want: Profile{Namespace: "kube-system", Name: "osp-flatcar", Defaulted: true}},
		{name: "flatcar on anexia with cloud-init",
			providerSpec: `{"cloudProvider":"anexia","operatingSystem":"flatcar","operatingSystemSpec":{"provisioningUtility":"cloud-init"}}`,
			want:         Profile{Namespace: "kube-system", Name: "osp-flatcar-cloud-init", Defaulted: true}},
		{name: "flatcar on anexia with ignition", providerSpec: `{"cloudProvider":"anexia","operatingSystem":"flatcar","operatingSystemSpec":{}}`,
			want: Profile{Namespace: "kube-system", Name: "osp-flatcar", Defaulted: true}},
		{name: "no default for sles", providerSpec: `{"operatingSystem":"sles"}`, wantErr: `machinedeployment team/pool: no OperatingSystemProfile: the MD names none (annotation k8c.io/operating-system-profile) and operating system "sles" has no default`, noDefault: true},
		{name: "no default for centos any more", providerSpec: `{"operatingSystem":"centos"}`, wantErr: `operating system "centos" has no default`, noDefault: true},
		{name: "no providerSpec", wantErr: `operating system "" has no default`, noDefault: true},
		{name: "unreadable providerSpec", providerSpec: `{"operatingSystem":`, wantErr: "machinedeployment team/pool: failed to read the operating system of its providerSpec"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ProfileOf(profileMD(tc.annotations, tc.providerSpec), "kube-system")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ProfileOf = %v, %v; want an error with %q", got, err, tc.wantErr)
				}
				if _, ok := errors.AsType[*NoDefaultProfileError](err); ok != tc.noDefault {
					t.Errorf("error %v: a *NoDefaultProfileError is %v, want %v", err, ok, tc.noDefault)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ProfileOf = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// The default comes from the template given: the revision's, when it differs
// from the MD's own.
func TestProfileOfTemplate(t *testing.T) {
	md := profileMD(nil, `{"operatingSystem":"flatcar"}`)
	revision := profileMD(nil, `{"operatingSystem":"ubuntu"}`).Spec.Template.Spec
	got, err := ProfileOfTemplate(md, &revision, "kube-system")
	if err != nil || got.Name != "osp-ubuntu" {
		t.Errorf("ProfileOfTemplate = %+v, %v; want osp-ubuntu", got, err)
	}
}
