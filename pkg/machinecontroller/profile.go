package machinecontroller

import (
	"encoding/json"
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8c.io/machine-controller/sdk/providerconfig"
	"k8c.io/machine-controller/sdk/userdata/flatcar"
)

// Profile names the OperatingSystemProfile of a MachineDeployment.
type Profile struct {
	Namespace, Name string
	// Defaulted says the MD names no profile: this is the default profile of
	// its operating system (DefaultProfile).
	Defaulted bool
}

// String returns "<namespace>/<name>".
func (p Profile) String() string { return p.Namespace + "/" + p.Name }

// ProfileOf returns the profile of md: the one it names in AnnotationOSP, in
// the namespace of AnnotationOSPNamespace or else defaultNamespace
// (--namespace). An MD that names none gets the default profile of the
// operating system of its template, in defaultNamespace, as upstream OSM's
// mutating webhook gives it; it fails with a *NoDefaultProfileError when that
// operating system has none. Every MachineDeployment has an output: rendered,
// or the error that says why not.
func ProfileOf(md *clusterv1alpha1.MachineDeployment, defaultNamespace string) (Profile, error) {
	return ProfileOfTemplate(md, &md.Spec.Template.Spec, defaultNamespace)
}

// ProfileOfTemplate is ProfileOf for md rendered from template, which may be
// the template of md's revision rather than its own (see
// machines.RevisionTemplates): the default profile is that of the operating
// system the payloads are for.
func ProfileOfTemplate(md *clusterv1alpha1.MachineDeployment, template *clusterv1alpha1.MachineSpec, defaultNamespace string) (Profile, error) {
	// Upstream's webhook also defaults an empty value.
	if name := md.Annotations[AnnotationOSP]; name != "" {
		p := Profile{Namespace: md.Annotations[AnnotationOSPNamespace], Name: name}
		if p.Namespace == "" {
			p.Namespace = defaultNamespace
		}
		return p, nil
	}
	name, err := DefaultProfile(template)
	if err != nil {
		return Profile{}, fmt.Errorf("machinedeployment %s/%s: %w", md.Namespace, md.Name, err)
	}
	return Profile{Namespace: defaultNamespace, Name: name, Defaulted: true}, nil
}

// DefaultProfile returns the name of the default profile for the operating
// system of an MD's template, as upstream OSM's mutating webhook chooses it:
// "osp-<os>" for the operating systems with a default profile, and
// "osp-flatcar-cloud-init" for Flatcar on Anexia provisioned with cloud-init.
// It fails with a *NoDefaultProfileError for any other operating system.
func DefaultProfile(template *clusterv1alpha1.MachineSpec) (string, error) {
	var spec struct {
		CloudProvider       providerconfig.CloudProvider   `json:"cloudProvider"`
		OperatingSystem     providerconfig.OperatingSystem `json:"operatingSystem"`
		OperatingSystemSpec struct {
			ProvisioningUtility flatcar.ProvisioningUtility `json:"provisioningUtility"`
		} `json:"operatingSystemSpec"`
	}
	if v := template.ProviderSpec.Value; v != nil && len(v.Raw) > 0 {
		if err := json.Unmarshal(v.Raw, &spec); err != nil {
			return "", fmt.Errorf("failed to read the operating system of its providerSpec to choose a default OperatingSystemProfile: %w", err)
		}
	}
	os := spec.OperatingSystem
	if os == providerconfig.OperatingSystemFlatcar && spec.CloudProvider == providerconfig.CloudProviderAnexia &&
		spec.OperatingSystemSpec.ProvisioningUtility == flatcar.CloudInit {
		return "osp-flatcar-cloud-init", nil
	}
	switch os {
	case providerconfig.OperatingSystemUbuntu, providerconfig.OperatingSystemFlatcar, providerconfig.OperatingSystemAmazonLinux2,
		providerconfig.OperatingSystemRockyLinux, providerconfig.OperatingSystemRHEL:
		return "osp-" + string(os), nil
	}
	return "", &NoDefaultProfileError{OperatingSystem: string(os)}
}

// NoDefaultProfileError says that an MD names no profile and its operating
// system has no default one.
type NoDefaultProfileError struct {
	OperatingSystem string
}

func (e *NoDefaultProfileError) Error() string {
	// The gist first: tables show the first 120 characters.
	return fmt.Sprintf("no OperatingSystemProfile: the MD names none (annotation %s) and operating system %q has no default; "+
		"defaults exist for amzn2, flatcar, rhel, rockylinux and ubuntu", AnnotationOSP, e.OperatingSystem)
}

// CloudProvider returns the cloud provider an MD's providerSpec names, "" when
// it names none or cannot be read (the render then says why).
func CloudProvider(md *clusterv1alpha1.MachineDeployment) string {
	v := md.Spec.Template.Spec.ProviderSpec.Value
	if v == nil {
		return ""
	}
	var spec struct {
		CloudProvider string `json:"cloudProvider"`
	}
	if err := json.Unmarshal(v.Raw, &spec); err != nil {
		return ""
	}
	return spec.CloudProvider
}
