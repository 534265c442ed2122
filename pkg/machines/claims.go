package machines

import (
	"fmt"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// machine-controller dictates the names of the Secrets it reads:
// "<md>-<ns>-<kind>-config" (and tooling "edge-provider-script-<md>-<ns>"). MD
// "pool" in namespace "team-prod" and MD "pool-team" in "prod" get the same
// names (see machinecontroller.Ref.SecretPrefix). Claims decides which of such
// MachineDeployments owns them; the others get none, and their
// OperatingSystemConfigs say why.

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
	// Secrets reads our Secrets (by label) in
	// machinecontroller.CloudInitSettingsNamespace.
	Secrets corev1listers.SecretLister
}

// Check fails with a *machinecontroller.ConflictError when another
// MachineDeployment owns md's dictated Secret names, or when one of them would
// be too long (machinecontroller.CheckSecretNames).
func (c *Claims) Check(md *clusterv1alpha1.MachineDeployment) error {
	if err := machinecontroller.CheckSecretNames(md); err != nil {
		return err
	}
	owner, err := c.Owner(md, nil)
	if err != nil {
		return err
	}
	if owner != machinecontroller.RefOf(md) {
		return &machinecontroller.ConflictError{MD: machinecontroller.RefOf(md), Owner: owner}
	}
	return nil
}

// Owner returns the owner of md's dictated Secret names. seen, if not nil, is
// a Secret just read from the API: it counts instead of the cache's copy, so a
// writer that was behind on the cache finds an owner it has not seen yet.
func (c *Claims) Owner(md *clusterv1alpha1.MachineDeployment, seen metav1.Object) (machinecontroller.Ref, error) {
	ref := machinecontroller.RefOf(md)
	peers, err := c.MachineDeployments.SharingSecretNames(ref)
	if err != nil {
		return machinecontroller.Ref{}, fmt.Errorf("failed to find machinedeployments sharing the secret names of %s: %w", ref, err)
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
			return machinecontroller.Ref{}, err
		}
		if s == nil {
			continue
		}
		if owner, ok := machinecontroller.Owner(s); ok && contains(live, owner) {
			return owner, nil
		}
	}
	oldest := live[0]
	for _, p := range live[1:] {
		if older(p, oldest) {
			oldest = p
		}
	}
	return machinecontroller.RefOf(oldest), nil
}

func (c *Claims) secret(name string, seen metav1.Object) (metav1.Object, error) {
	if seen != nil && seen.GetName() == name {
		return seen, nil
	}
	s, err := c.Secrets.Secrets(machinecontroller.CloudInitSettingsNamespace).Get(name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("failed to read secret %s/%s: %w", machinecontroller.CloudInitSettingsNamespace, name, err)
	}
	return s, nil
}

func contains(mds []*clusterv1alpha1.MachineDeployment, ref machinecontroller.Ref) bool {
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
	return strings.Compare(machinecontroller.RefOf(a).String(), machinecontroller.RefOf(b).String()) < 0
}
