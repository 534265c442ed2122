package defaultosps

import (
	"strings"
	"testing"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
)

func TestLoad(t *testing.T) {
	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		os      ospv1alpha1.OperatingSystem
		utility ospv1alpha1.ProvisioningUtility
	}{
		"osp-amzn2":              {ospv1alpha1.OperatingSystemAmazonLinux2, ospv1alpha1.ProvisioningUtilityCloudInit},
		"osp-flatcar":            {ospv1alpha1.OperatingSystemFlatcar, ospv1alpha1.ProvisioningUtilityIgnition},
		"osp-flatcar-cloud-init": {ospv1alpha1.OperatingSystemFlatcar, ospv1alpha1.ProvisioningUtilityCloudInit},
		"osp-rhel":               {ospv1alpha1.OperatingSystemRHEL, ospv1alpha1.ProvisioningUtilityCloudInit},
		"osp-rockylinux":         {ospv1alpha1.OperatingSystemRockyLinux, ospv1alpha1.ProvisioningUtilityCloudInit},
		"osp-ubuntu":             {ospv1alpha1.OperatingSystemUbuntu, ospv1alpha1.ProvisioningUtilityCloudInit},
	}
	if len(osps) != len(want) {
		t.Fatalf("got %d profiles, want %d", len(osps), len(want))
	}
	for _, osp := range osps {
		w, ok := want[osp.Name]
		switch {
		case !ok:
			t.Errorf("unexpected profile %s", osp.Name)
		case osp.Namespace != "kube-system":
			t.Errorf("%s: namespace %q, want kube-system", osp.Name, osp.Namespace)
		case osp.Spec.Version != Version:
			t.Errorf("%s: spec.version %q, want the release version %q", osp.Name, osp.Spec.Version, Version)
		case osp.Spec.OSName != w.os:
			t.Errorf("%s: osName %q, want %q", osp.Name, osp.Spec.OSName, w.os)
		case osp.Spec.ProvisioningUtility != w.utility:
			t.Errorf("%s: provisioningUtility %q, want %q", osp.Name, osp.Spec.ProvisioningUtility, w.utility)
		case len(osp.Spec.SupportedCloudProviders) == 0:
			t.Errorf("%s: no supported cloud providers", osp.Name)
		case len(osp.Spec.ProvisioningConfig.SupportedContainerRuntimes) != 1 ||
			osp.Spec.ProvisioningConfig.SupportedContainerRuntimes[0].Name != ospv1alpha1.ContainerRuntimeContainerd:
			t.Errorf("%s: want exactly containerd as container runtime", osp.Name)
		}
	}
}

func TestLoadReturnsFreshObjects(t *testing.T) {
	a, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	a[0].Spec.Version = "changed"
	b, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if b[0].Spec.Version != Version {
		t.Fatalf("a caller's change leaked into the next Load: version %q", b[0].Spec.Version)
	}
}

func TestDecodeErrors(t *testing.T) {
	const head = "apiVersion: operatingsystemmanager.k8c.io/v1alpha1\nkind: OperatingSystemProfile\n"
	for name, tc := range map[string]struct {
		yaml, want string
	}{
		"unknown field": {head + "metadata: {name: a, namespace: b}\nspec: {osName: ubuntu, osVerison: x}\n", `unknown field "osVerison"`},
		"wrong kind":    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: b}\n", "kind is /v1, Kind=ConfigMap"},
		"no namespace":  {head + "metadata: {name: a}\nspec: {osName: ubuntu}\n", "metadata.namespace"},
		"not yaml":      {head + "spec: [\n", "osp-x.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decode("osp-x.yaml", []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("decode error = %v, want it to contain %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "default operating system profile osp-x.yaml: ") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}
