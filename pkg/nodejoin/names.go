package nodejoin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

const (
	// Namespace holds the join identities (ServiceAccounts) and their
	// credentials (Secrets), and nothing else: its ServiceAccounts' group is
	// bound to system:node-bootstrapper.
	Namespace = "osm-node-join"
	// AccessClusterRole is what osm-apiserver does in Namespace, bound there
	// by the RoleBinding AccessRoleBinding (artifacts/deploy); the syncer
	// restores both with the namespace.
	AccessClusterRole = "osm-apiserver:node-join"
	// AccessRoleBinding binds AccessClusterRole in Namespace.
	AccessRoleBinding = "osm-apiserver:node-join"

	// PurposeJoin labels the join identities and their credentials.
	PurposeJoin = "machine-join"
	// SecretTypeCredential is the type of the Secret the join tokens are bound to.
	SecretTypeCredential corev1.SecretType = "osm.k8c.io/machine-join-credential"

	// Annotations of a join identity: the durable record of the answer.
	annotationMachine    = "osm.k8c.io/machine"
	annotationMachineUID = "osm.k8c.io/machine-uid"
	annotationBootID     = "osm.k8c.io/boot-id"
	// annotationBootSecretHash is the sha256 of the answered boot's secret:
	// the secret itself is kept nowhere but on the node.
	annotationBootSecretHash = "osm.k8c.io/boot-secret-sha256"
	annotationAnsweredAt     = "osm.k8c.io/answered-at"
	// annotationApprovedCSR names the one client CSR approved for the
	// identity ("<name>/<uid>"); later ones are denied.
	annotationApprovedCSR = "osm.k8c.io/approved-csr"
	// labelMachineNamespace holds the Machine's namespace, for listing.
	labelMachineNamespace = "osm.k8c.io/machine-namespace"

	// usernamePrefix prefixes the user names of the join identities.
	usernamePrefix = "system:serviceaccount:" + Namespace + ":"
	namePrefix     = "osm-join-"
)

// MachineKey identifies a Machine: "<namespace>/<name>".
type MachineKey = types.NamespacedName

// AccountName is the name of the join identity of a Machine and of its
// credential: a digest of its namespace and name, unique however long they
// are.
func AccountName(m MachineKey) string {
	sum := sha256.Sum256([]byte(m.String()))
	return namePrefix + hex.EncodeToString(sum[:16])
}

// Record is what a join identity says about its machine's answer.
type Record struct {
	Account    *corev1.ServiceAccount
	Machine    MachineKey
	MachineUID types.UID
	BootID     string
	// BootSecretHash is the hash of the answered boot's secret; "" when it
	// sent none (a profile older than v0.8.0).
	BootSecretHash string
	AnsweredAt     time.Time
}

// Boot is the boot that asks: its id, and the secret it made for itself
// ("" from older profiles).
type Boot struct {
	ID, Secret string
}

// Answered says whether b is the boot r records as answered: the same id
// and, where that boot sent a secret, the same secret. The boot id alone
// proves little: boot reports and logs show it.
func (r Record) Answered(b Boot) bool {
	if r.BootID != b.ID {
		return false
	}
	return r.HoldsSecret(b.Secret)
}

// HoldsSecret says whether secret is the one the answered boot sent; true
// when that boot sent none (a profile older than v0.8.0): there is nothing
// to check.
func (r Record) HoldsSecret(secret string) bool {
	if r.BootSecretHash == "" {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(r.BootSecretHash), []byte(secretHash(secret))) == 1
}

// secretHash is what is kept of a boot secret.
func secretHash(secret string) string {
	if secret == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// ParseRecord reads the record of a join identity; ok is false for a
// ServiceAccount of Namespace that is not one.
func ParseRecord(sa *corev1.ServiceAccount) (r Record, ok bool) {
	if sa.Namespace != Namespace || sa.Labels[machinecontroller.ManagedByLabel] != machinecontroller.ManagedByValue ||
		sa.Labels[machinecontroller.PurposeLabel] != PurposeJoin {
		return Record{}, false
	}
	key, err := parseMachineKey(sa.Annotations[annotationMachine])
	if err != nil || AccountName(key) != sa.Name {
		return Record{}, false
	}
	at, err := time.Parse(time.RFC3339, sa.Annotations[annotationAnsweredAt])
	if err != nil {
		return Record{}, false
	}
	return Record{Account: sa, Machine: key, MachineUID: types.UID(sa.Annotations[annotationMachineUID]),
		BootID: sa.Annotations[annotationBootID], BootSecretHash: sa.Annotations[annotationBootSecretHash], AnsweredAt: at}, true
}

func parseMachineKey(s string) (MachineKey, error) {
	ref, err := machinecontroller.ParseRef(s)
	if err != nil {
		return MachineKey{}, fmt.Errorf("invalid machine %q: want <namespace>/<name>", s)
	}
	return MachineKey{Namespace: ref.Namespace, Name: ref.Name}, nil
}

// machineOf returns the Machine an object of ours in Namespace is for.
func machineOf(obj metav1.Object) (MachineKey, bool) {
	if obj.GetLabels()[machinecontroller.PurposeLabel] != PurposeJoin {
		return MachineKey{}, false
	}
	key, err := parseMachineKey(obj.GetAnnotations()[annotationMachine])
	if err != nil || AccountName(key) != obj.GetName() {
		return MachineKey{}, false
	}
	return key, true
}

func objectMeta(m *clusterv1alpha1.Machine) metav1.ObjectMeta {
	key := MachineKey{Namespace: m.Namespace, Name: m.Name}
	return metav1.ObjectMeta{
		Name:      AccountName(key),
		Namespace: Namespace,
		Labels: map[string]string{
			machinecontroller.ManagedByLabel: machinecontroller.ManagedByValue,
			machinecontroller.PurposeLabel:   PurposeJoin,
			labelMachineNamespace:            m.Namespace,
		},
		Annotations: map[string]string{annotationMachine: key.String()},
	}
}

// newAccount is the join identity of m, recording that boot asked at now.
func newAccount(m *clusterv1alpha1.Machine, boot Boot, now time.Time) *corev1.ServiceAccount {
	meta := objectMeta(m)
	meta.Annotations[annotationMachineUID] = string(m.UID)
	meta.Annotations[annotationBootID] = boot.ID
	if h := secretHash(boot.Secret); h != "" {
		meta.Annotations[annotationBootSecretHash] = h
	}
	meta.Annotations[annotationAnsweredAt] = now.UTC().Format(time.RFC3339)
	return &corev1.ServiceAccount{ObjectMeta: meta, AutomountServiceAccountToken: ptr.To(false)}
}

// newCredential is the Secret m's join tokens are bound to.
func newCredential(m *clusterv1alpha1.Machine) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: objectMeta(m), Type: SecretTypeCredential}
}

// Selector selects the join identities and credentials.
func Selector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{
		machinecontroller.ManagedByLabel: machinecontroller.ManagedByValue,
		machinecontroller.PurposeLabel:   PurposeJoin,
	})
}

// AccountOf returns the name of the join identity whose user name username
// is; ok is false for any other user.
func AccountOf(username string) (name string, ok bool) {
	name, ok = strings.CutPrefix(username, usernamePrefix)
	return name, ok && name != ""
}
