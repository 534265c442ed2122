package machinecontroller

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Everything osm-apiserver writes for a MachineDeployment (payload Secrets,
// tokens, RBAC) carries the same labels, so cleanup can find it without a
// finalizer on the MachineDeployment and without owner references, which would
// not work across namespaces or, in management/worker mode, across clusters.
const (
	// ManagedByLabel marks every object osm-apiserver writes.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of ManagedByLabel.
	ManagedByValue = "osm-apiserver"
	// NamespaceLabel holds the namespace of the MachineDeployment.
	NamespaceLabel = "osm.k8c.io/machine-deployment-namespace"
	// HashLabel holds Ref.Hash: MachineDeployment names can be longer than a
	// label value may be, so the label carries a digest and the full name is in
	// RefAnnotation.
	HashLabel = "osm.k8c.io/machine-deployment"
	// RefAnnotation holds "<namespace>/<name>" of the MachineDeployment.
	RefAnnotation = "osm.k8c.io/machine-deployment"
	// PurposeLabel says what an object is for (bootstrap-config, kubelet-bootstrap-token, ...).
	PurposeLabel = "osm.k8c.io/purpose"
)

// Ref identifies a MachineDeployment.
type Ref struct {
	Namespace string
	Name      string
}

// String returns "<namespace>/<name>", the workqueue key of the MachineDeployment.
func (r Ref) String() string { return r.Namespace + "/" + r.Name }

// Hash is a digest of the reference, usable in labels and object names
// whatever characters the name holds. Names made of it are unique
// per MachineDeployment: 128 bits, so that no tenant can search for a name of
// its own whose digest equals another MD's (2^64 tries would be within reach).
func (r Ref) Hash() string {
	sum := sha256.Sum256([]byte(r.String()))
	return hex.EncodeToString(sum[:16])
}

// ParseRef reads a "<namespace>/<name>" key.
func ParseRef(key string) (Ref, error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" {
		return Ref{}, fmt.Errorf("invalid machine deployment key %q: want <namespace>/<name>", key)
	}
	return Ref{Namespace: ns, Name: name}, nil
}

// Labels returns the labels of an object written for r with the given purpose.
func (r Ref) Labels(purpose string) map[string]string {
	return map[string]string{
		ManagedByLabel: ManagedByValue,
		NamespaceLabel: r.Namespace,
		HashLabel:      r.Hash(),
		PurposeLabel:   purpose,
	}
}

// Annotations returns the annotations that name r on an object written for it.
func (r Ref) Annotations() map[string]string {
	return map[string]string{RefAnnotation: r.String()}
}

// Selector selects every object written for r.
func (r Ref) Selector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedByValue, HashLabel: r.Hash()})
}

// ManagedSelector selects every object osm-apiserver wrote.
func ManagedSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedByValue})
}

// Owner returns the MachineDeployment an object was written for. ok is false
// for objects that are not ours or lack a valid reference.
func Owner(obj metav1.Object) (ref Ref, ok bool) {
	if obj.GetLabels()[ManagedByLabel] != ManagedByValue {
		return Ref{}, false
	}
	ref, err := ParseRef(obj.GetAnnotations()[RefAnnotation])
	if err != nil || obj.GetLabels()[HashLabel] != ref.Hash() {
		return Ref{}, false
	}
	return ref, true
}

// MachineDeploymentOf returns the MachineDeployment that controls ms.
func MachineDeploymentOf(ms *clusterv1alpha1.MachineSet) (Ref, bool) {
	if owner := metav1.GetControllerOf(ms); owner != nil && owner.Kind == "MachineDeployment" {
		return Ref{Namespace: ms.Namespace, Name: owner.Name}, true
	}
	return Ref{}, false
}
