// Package bootreports is how a machine's BootReport is kept: one Secret per
// machine in cloud-init-settings (type osm.k8c.io/boot-report, labelled with
// its MachineDeployment's owner labels), how a step record changes it,
// what is scrubbed from log tails and kept of them, and the metadata-only
// informer that counts every MachineDeployment's reports for its
// OperatingSystemConfig, and the read-change-write of one report (Update)
// that the step subresource and the leader share.
package bootreports

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Namespace holds the reports' Secrets: the namespace osm-apiserver writes
// anyway, which no tenant reads.
const Namespace = machinecontroller.CloudInitSettingsNamespace

const (
	// Purpose is the osm.k8c.io/purpose label of a report's Secret; the
	// payload Secret informer leaves these out.
	Purpose = "boot-report"
	// SecretType is the type of a report's Secret.
	SecretType corev1.SecretType = "osm.k8c.io/boot-report"
	// StateLabel holds the report's state, on the Secret and the
	// BootReport (the one label a BootReport has: select on it).
	StateLabel = "osm.k8c.io/boot-state"
	// MachineAnnotation holds "<namespace>/<machine>" of the report.
	MachineAnnotation = "osm.k8c.io/machine"
	// RevisionAnnotation holds the MachineDeployment revision the node says
	// it was provisioned with.
	RevisionAnnotation = "osm.k8c.io/machine-deployment-revision"
	// UpdatedAnnotation holds when the report was last written (RFC 3339):
	// the metadata-only informer decides expiry with it.
	UpdatedAnnotation = "osm.k8c.io/last-update"
	// dataKey holds the report (spec and status, JSON of v1alpha1).
	dataKey = "report"
)

// SecretName is the name of the Secret of the report of machine in
// namespace: a digest of both, unique per machine whatever their lengths.
func SecretName(namespace, machine string) string {
	return "osm-boot-" + machinecontroller.Ref{Namespace: namespace, Name: machine}.Hash()
}

// Selector selects every report's Secret; with a namespace, only the
// reports of that namespace's machines.
func Selector(namespace string) labels.Selector {
	set := labels.Set{machinecontroller.ManagedByLabel: machinecontroller.ManagedByValue, machinecontroller.PurposeLabel: Purpose}
	if namespace != "" {
		set[machinecontroller.NamespaceLabel] = namespace
	}
	return labels.SelectorFromSet(set)
}

// MachineOf returns the namespace and name of the machine of a report's
// Secret (or its metadata); ok is false for any other object.
func MachineOf(obj metav1.Object) (namespace, machine string, ok bool) {
	if obj.GetLabels()[machinecontroller.PurposeLabel] != Purpose {
		return "", "", false
	}
	ref, err := machinecontroller.ParseRef(obj.GetAnnotations()[MachineAnnotation])
	if err != nil || obj.GetName() != SecretName(ref.Namespace, ref.Name) {
		return "", "", false
	}
	return ref.Namespace, ref.Name, true
}

// LastUpdate returns when a report's Secret was last written: its
// UpdatedAnnotation, else its creation.
func LastUpdate(obj metav1.Object) time.Time {
	if t, err := time.Parse(time.RFC3339, obj.GetAnnotations()[UpdatedAnnotation]); err == nil {
		return t
	}
	return obj.GetCreationTimestamp().Time
}
