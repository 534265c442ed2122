package machinecontroller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// Annotations of the machine-controller contract (../shared/contract.md).
const (
	// AnnotationOSP on a MachineDeployment names its OperatingSystemProfile.
	AnnotationOSP = "k8c.io/operating-system-profile"
	// AnnotationOSPNamespace on a MachineDeployment names the OSP's namespace.
	AnnotationOSPNamespace = "k8c.io/operating-system-profile-namespace"
	// AnnotationMDRevision is the MachineDeployment's revision.
	AnnotationMDRevision = "machinedeployment.clusters.k8s.io/revision"

	// AnnotationSecretMDRevision on a payload Secret must equal the MD's revision,
	// or machine-controller creates no VM.
	AnnotationSecretMDRevision = "k8c.io/machine-deployment-revision"
	// AnnotationSecretOSPVersion on a payload Secret is the OSP's spec.version.
	AnnotationSecretOSPVersion = "k8c.io/osp-version"
	// AnnotationSecretMDAnnotationsHash on a payload Secret is AnnotationsHash of the MD.
	AnnotationSecretMDAnnotationsHash = "k8c.io/mdannotations-hash"

	// CloudInitSettingsNamespace holds the payload Secrets.
	CloudInitSettingsNamespace = "cloud-init-settings"
	// SecretDataKey is the key of the user-data in a payload Secret.
	SecretDataKey = "cloud-config"
	// KubeconfigDataKey is the key of the kubeconfig in the Secret of
	// KubeletBootstrapSecretName; our OSPs' scripts read it.
	KubeconfigDataKey = "kubeconfig"
	// EdgeScriptDataKey is the key of the join script in the Secret of
	// EdgeScriptSecretName, as tooling around upstream OSM expects it.
	EdgeScriptDataKey = "fetch-bootstrap-script"
	// CloudProviderEdge is the cloud provider of machines nobody provisions.
	CloudProviderEdge = "edge"
	// MachineNamePlaceholder is replaced by machine-controller with the machine's name.
	MachineNamePlaceholder = "<MACHINE_NAME>"

	// KubeletConfigAnnotationPrefix prefixes the kubelet knobs on a MachineDeployment.
	KubeletConfigAnnotationPrefix = "v1.kubelet-config.machine-controller.kubermatic.io/"
)

// SecretName is the name of a MachineDeployment's payload Secret in
// CloudInitSettingsNamespace: "<md>-<ns>-<kind>-config".
func SecretName(mdName, mdNamespace string, kind osm.PayloadType) string {
	return fmt.Sprintf("%s-%s-%s-config", mdName, mdNamespace, kind)
}

// EdgeScriptSecretName is the Secret in CloudInitSettingsNamespace holding the
// join script of an MD on cloud provider edge: "edge-provider-script-<md>-<ns>",
// upstream OSM's name, which tooling expects.
func EdgeScriptSecretName(mdName, mdNamespace string) string {
	return fmt.Sprintf("edge-provider-script-%s-%s", mdName, mdNamespace)
}

// KubeletBootstrapSecretName is the Secret in CloudInitSettingsNamespace holding
// the kubelet's bootstrap kubeconfig (data key "kubeconfig"), as OSP templates
// reference it through .BootstrapKubeconfigSecretName. The name is ours, so it is
// made of the MachineDeployment's digest: unique per MD whatever the length of
// its namespace and name ("<md>-<ns>" alone is not: see Ref.SecretPrefix).
func KubeletBootstrapSecretName(mdName, mdNamespace string) string {
	return "osm-" + Ref{Namespace: mdNamespace, Name: mdName}.Hash() + "-kubelet-bootstrap-config"
}

// AnnotationsHash is the sha256 (hex) of the annotations marshalled as JSON
// (keys sorted, as encoding/json does).
func AnnotationsHash(annotations map[string]string) string {
	// Marshalling a map[string]string cannot fail.
	data, _ := json.Marshal(annotations)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
