package bootreports

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// stored is a report as its Secret holds it: the v1alpha1 JSON of its spec
// and status, so that the stored form changes only with the API version.
type stored struct {
	APIVersion string                    `json:"apiVersion"`
	Spec       v1alpha1.BootReportSpec   `json:"spec"`
	Status     v1alpha1.BootReportStatus `json:"status"`
}

// Secret returns the Secret that stores report, the report of a machine of
// the MachineDeployment ref: name, labels and annotations from ref and the
// report, the report in its data. The caller sets the resourceVersion to
// update one.
func Secret(ref machinecontroller.Ref, report *osm.BootReport) (*corev1.Secret, error) {
	var s stored
	s.APIVersion = v1alpha1.SchemeGroupVersion.String()
	if err := v1alpha1.Convert_osm_BootReportSpec_To_v1alpha1_BootReportSpec(&report.Spec, &s.Spec, nil); err != nil {
		return nil, err
	}
	if err := v1alpha1.Convert_osm_BootReportStatus_To_v1alpha1_BootReportStatus(&report.Status, &s.Status, nil); err != nil {
		return nil, err
	}
	data, err := json.Marshal(&s)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the boot report of machine %s/%s: %w", ref.Namespace, report.Spec.Machine, err)
	}
	lbls := ref.Labels(Purpose)
	lbls[StateLabel] = string(report.Status.State)
	annotations := ref.Annotations()
	annotations[MachineAnnotation] = ref.Namespace + "/" + report.Spec.Machine
	annotations[RevisionAnnotation] = report.Spec.MachineDeploymentRevision
	if t := report.Status.LastUpdateTime; t != nil {
		annotations[UpdatedAnnotation] = t.UTC().Format(time.RFC3339)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   Namespace,
			Name:        SecretName(ref.Namespace, report.Spec.Machine),
			Labels:      lbls,
			Annotations: annotations,
		},
		Type: SecretType,
		Data: map[string][]byte{dataKey: data},
	}, nil
}

// FromSecret returns the report a Secret stores, with the Secret's
// identity, resourceVersion and creation as its own, in the namespace of
// its machine. It fails for a Secret that is not a report's.
func FromSecret(secret *corev1.Secret) (*osm.BootReport, error) {
	namespace, machine, ok := MachineOf(secret)
	if !ok || secret.Type != SecretType {
		return nil, fmt.Errorf("secret %s/%s is not a boot report", secret.Namespace, secret.Name)
	}
	var s stored
	if err := json.Unmarshal(secret.Data[dataKey], &s); err != nil {
		return nil, fmt.Errorf("secret %s/%s: failed to decode the boot report of machine %s/%s: %w", secret.Namespace, secret.Name, namespace, machine, err)
	}
	report := &osm.BootReport{ObjectMeta: meta(secret, namespace, machine)}
	if err := v1alpha1.Convert_v1alpha1_BootReportSpec_To_osm_BootReportSpec(&s.Spec, &report.Spec, nil); err != nil {
		return nil, err
	}
	if err := v1alpha1.Convert_v1alpha1_BootReportStatus_To_osm_BootReportStatus(&s.Status, &report.Status, nil); err != nil {
		return nil, err
	}
	return report, nil
}

// meta returns the metadata of the BootReport of machine in namespace that
// obj, its Secret, stores: the Secret's uid, resourceVersion, creation and
// deletion, and of its labels only StateLabel.
func meta(obj metav1.Object, namespace, machine string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{
		Name:              machine,
		Namespace:         namespace,
		UID:               obj.GetUID(),
		ResourceVersion:   obj.GetResourceVersion(),
		CreationTimestamp: obj.GetCreationTimestamp(),
		DeletionTimestamp: obj.GetDeletionTimestamp(),
	}
	if state, ok := obj.GetLabels()[StateLabel]; ok {
		m.Labels = map[string]string{StateLabel: state}
	}
	return m
}
