package machinecontroller

import (
	"fmt"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	corev1listers "k8s.io/client-go/listers/core/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// machine-controller dictates the names of the Secrets it reads:
// "<md>-<ns>-<kind>-config" (and tooling "edge-provider-script-<md>-<ns>"). MD
// "pool" in namespace "team-prod" and MD "pool-team" in "prod" get the same
// names. Claims decides which of such MachineDeployments owns them; the others
// get none, and their OperatingSystemConfigs say why.

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

// SecretPrefixIndex indexes MachineDeployments by Ref.SecretPrefix.
const SecretPrefixIndex = "secret-prefix"

func secretPrefixIndexFunc(obj any) ([]string, error) {
	md, ok := obj.(*clusterv1alpha1.MachineDeployment)
	if !ok {
		return nil, nil
	}
	return []string{RefOf(md).SecretPrefix()}, nil
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

// Claims decides which MachineDeployment owns Secret names that several MDs'
// dictated names map to:
//
//  1. the MD whose owner labels are on an existing Secret of those names
//     (bootstrap, provisioning, edge script, in this order), unless it is being
//     deleted: the first owner keeps its Secrets;
//  2. otherwise the oldest of them (creationTimestamp, then uid).
//
// Every replica decides from its informers alone, so all agree once they have
// caught up. A Secret without our labels (written by someone else) is no claim.
type Claims struct {
	// MachineDeployments must come from an informer with SecretPrefixIndex.
	MachineDeployments Lister
	// Secrets reads our Secrets (by label) in CloudInitSettingsNamespace.
	Secrets corev1listers.SecretLister
}

// Check fails with a *ConflictError when another MachineDeployment owns md's
// dictated Secret names, or when one of them would be too long.
func (c *Claims) Check(md *clusterv1alpha1.MachineDeployment) error {
	if err := CheckSecretNames(md); err != nil {
		return err
	}
	owner, err := c.Owner(md, nil)
	if err != nil {
		return err
	}
	if owner != RefOf(md) {
		return &ConflictError{MD: RefOf(md), Owner: owner}
	}
	return nil
}

// Owner returns the owner of md's dictated Secret names. seen, if not nil, is
// a Secret just read from the API: it counts instead of the cache's copy, so a
// writer that was behind on the cache finds an owner it has not seen yet.
func (c *Claims) Owner(md *clusterv1alpha1.MachineDeployment, seen metav1.Object) (Ref, error) {
	ref := RefOf(md)
	peers, err := c.MachineDeployments.SharingSecretNames(ref)
	if err != nil {
		return Ref{}, fmt.Errorf("failed to find machinedeployments sharing the secret names of %s: %w", ref, err)
	}
	// The common case: nobody else has these names.
	if len(peers) == 0 || len(peers) == 1 && peers[0].Namespace == md.Namespace && peers[0].Name == md.Name {
		return ref, nil
	}
	var live []*clusterv1alpha1.MachineDeployment
	for _, p := range peers {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	if len(live) == 0 || len(live) == 1 && live[0].Namespace == md.Namespace && live[0].Name == md.Name {
		return ref, nil
	}
	for _, name := range ref.DictatedSecretNames() {
		s, err := c.secret(name, seen)
		if err != nil {
			return Ref{}, err
		}
		if s == nil {
			continue
		}
		if owner, ok := Owner(s); ok && contains(live, owner) {
			return owner, nil
		}
	}
	oldest := live[0]
	for _, p := range live[1:] {
		if older(p, oldest) {
			oldest = p
		}
	}
	return RefOf(oldest), nil
}

func (c *Claims) secret(name string, seen metav1.Object) (metav1.Object, error) {
	if seen != nil && seen.GetName() == name {
		return seen, nil
	}
	s, err := c.Secrets.Secrets(CloudInitSettingsNamespace).Get(name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("failed to read secret %s/%s: %w", CloudInitSettingsNamespace, name, err)
	}
	return s, nil
}

func contains(mds []*clusterv1alpha1.MachineDeployment, ref Ref) bool {
	for _, md := range mds {
		if md.Namespace == ref.Namespace && md.Name == ref.Name {
			return true
		}
	}
	return false
}

// older orders MachineDeployments by age, then uid, then namespace and name.
func older(a, b *clusterv1alpha1.MachineDeployment) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	if a.UID != b.UID {
		return a.UID < b.UID
	}
	return strings.Compare(RefOf(a).String(), RefOf(b).String()) < 0
}
