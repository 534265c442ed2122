package machinecontroller

import (
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// machine-controller dictates the names of the Secrets it reads:
// "<md>-<ns>-<kind>-config" (and tooling "edge-provider-script-<md>-<ns>"). MD
// "pool" in namespace "team-prod" and MD "pool-team" in "prod" get the same
// names. Which of such MachineDeployments owns them is decided by
// machines.Claims; the others get a *ConflictError.

// SecretPrefix is the part of r's dictated Secret names that stands for r,
// "<name>-<namespace>"; MachineDeployments with equal prefixes share the names.
func (r Ref) SecretPrefix() string { return r.Name + "-" + r.Namespace }

// DictatedSecretNames returns r's Secret names that machine-controller and
// tooling dictate, bootstrap first: its payloads and its edge join script.
func (r Ref) DictatedSecretNames() []string {
	return []string{
		SecretName(r.Name, r.Namespace, osm.PayloadTypeBootstrap),
		SecretName(r.Name, r.Namespace, osm.PayloadTypeProvisioning),
		EdgeScriptSecretName(r.Name, r.Namespace),
	}
}

// RefOf returns the reference of md.
func RefOf(md *clusterv1alpha1.MachineDeployment) Ref {
	return Ref{Namespace: md.Namespace, Name: md.Name}
}

// ConflictError says that another MachineDeployment owns the Secret names
// machine-controller dictates for MD.
type ConflictError struct {
	MD, Owner Ref
}

func (e *ConflictError) Error() string {
	// The owner first: tables show the first 120 characters.
	return fmt.Sprintf("conflict: machinedeployment %s has the Secrets %s/%s-{bootstrap,provisioning}-config, "+
		"which machine-controller reads for machinedeployment %s too; rename one of the two",
		e.Owner, CloudInitSettingsNamespace, e.MD.SecretPrefix(), e.MD)
}

// NameTooLongError says that a Secret machine-controller dictates for MD
// would have a name longer than Kubernetes allows.
type NameTooLongError struct {
	MD   Ref
	Name string
}

func (e *NameTooLongError) Error() string {
	return fmt.Sprintf("machinedeployment %s: machine-controller reads its Secret %s/%s, whose name would be %d characters, more than the %d Kubernetes allows; shorten the MachineDeployment's name",
		e.MD, CloudInitSettingsNamespace, e.Name, len(e.Name), validation.DNS1123SubdomainMaxLength)
}

// CheckSecretNames fails with a *NameTooLongError when a Secret
// machine-controller dictates for md would have a name longer than Kubernetes
// allows (the edge join script's only for an MD on cloud provider edge, which
// alone has one).
func CheckSecretNames(md *clusterv1alpha1.MachineDeployment) error {
	// Lengths first: this runs on every render of every MD.
	prefix := len(md.Name) + 1 + len(md.Namespace)
	const max = validation.DNS1123SubdomainMaxLength
	provisioning := prefix + len("-provisioning-config") // longer than "-bootstrap-config"
	edge := len("edge-provider-script-") + prefix
	if provisioning <= max && (edge <= max || CloudProvider(md) != CloudProviderEdge) {
		return nil
	}
	ref := RefOf(md)
	name := SecretName(ref.Name, ref.Namespace, osm.PayloadTypeProvisioning)
	if provisioning <= max {
		name = EdgeScriptSecretName(ref.Name, ref.Namespace)
	}
	return &NameTooLongError{MD: ref, Name: name}
}
