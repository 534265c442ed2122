package machinecontroller

import (
	"encoding/json"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
)

// Profile names the OperatingSystemProfile of a MachineDeployment.
type Profile struct {
	Namespace, Name string
}

// String returns "<namespace>/<name>".
func (p Profile) String() string { return p.Namespace + "/" + p.Name }

// ProfileOf returns the profile md names in AnnotationOSP, in the namespace of
// AnnotationOSPNamespace or else defaultNamespace (--namespace). ok is false
// when md names none: it then has no OperatingSystemConfig and no Secrets.
func ProfileOf(md *clusterv1alpha1.MachineDeployment, defaultNamespace string) (p Profile, ok bool) {
	p.Name = md.Annotations[AnnotationOSP]
	if p.Name == "" {
		return Profile{}, false
	}
	p.Namespace = md.Annotations[AnnotationOSPNamespace]
	if p.Namespace == "" {
		p.Namespace = defaultNamespace
	}
	return p, true
}

// HasProfile reports whether md names a profile, i.e. has a rendered output.
func HasProfile(md *clusterv1alpha1.MachineDeployment) bool {
	return md.Annotations[AnnotationOSP] != ""
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
