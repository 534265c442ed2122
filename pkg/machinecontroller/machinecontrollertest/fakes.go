// Package machinecontrollertest has fakes for tests: MachineDeployments, a
// Lister over a slice, and MachineSets and Machines as machine-controller
// makes them.
package machinecontrollertest

import (
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// ProfileNamespace is where the fakes' MDs find their profiles.
const ProfileNamespace = "kube-system"

// MD returns a MachineDeployment at revision 3 naming profile (none if empty).
func MD(namespace, name, profile string, labels map[string]string) *clusterv1alpha1.MachineDeployment {
	md := &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{
		Namespace: namespace, Name: name, Labels: labels,
		UID:               types.UID(namespace + "-" + name),
		ResourceVersion:   "1",
		CreationTimestamp: metav1.Unix(1700000000, 0),
		Annotations:       map[string]string{machinecontroller.AnnotationMDRevision: "3"},
	}}
	if profile != "" {
		md.Annotations[machinecontroller.AnnotationOSP] = profile
	}
	return md
}

// BenchMD returns the MachineDeployment the render benchmarks use: ubuntu on
// aws with kubelet 1.33.4, at revision 1, naming osp-ubuntu of
// ProfileNamespace, where it lives too.
func BenchMD(name string) *clusterv1alpha1.MachineDeployment {
	return &clusterv1alpha1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ProfileNamespace, Name: name, UID: types.UID(name), ResourceVersion: "1",
			Annotations: map[string]string{machinecontroller.AnnotationOSP: "osp-ubuntu", machinecontroller.AnnotationMDRevision: "1"},
		},
		Spec: clusterv1alpha1.MachineDeploymentSpec{Template: clusterv1alpha1.MachineTemplateSpec{Spec: clusterv1alpha1.MachineSpec{
			ProviderSpec: clusterv1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: []byte(`{"cloudProvider":"aws",` +
				`"cloudProviderSpec":{"region":"eu-central-1"},"operatingSystem":"ubuntu","operatingSystemSpec":{},` +
				`"sshPublicKeys":["ssh-ed25519 AAAA bench@osm"]}`)}},
			Versions: clusterv1alpha1.MachineVersionInfo{Kubelet: "1.33.4"},
		}}},
	}
}

// OnCloud sets md's providerSpec to one naming cloud and returns md.
func OnCloud(md *clusterv1alpha1.MachineDeployment, cloud string) *clusterv1alpha1.MachineDeployment {
	md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(`{"cloudProvider":"` + cloud + `"}`)}
	return md
}

// Lister is a machines.Lister over a slice; profiles of MDs that name no
// namespace are in ProfileNamespace. (pkg/machines's tests check that it is
// one: this package sits below pkg/machines and does not import it.)
type Lister []*clusterv1alpha1.MachineDeployment

// List implements machines.Lister; like the informer's, in no order.
func (l Lister) List(namespace string, selector labels.Selector) ([]*clusterv1alpha1.MachineDeployment, error) {
	var out []*clusterv1alpha1.MachineDeployment
	for i := len(l) - 1; i >= 0; i-- {
		md := l[i]
		if (namespace == "" || md.Namespace == namespace) && selector.Matches(labels.Set(md.Labels)) {
			out = append(out, md)
		}
	}
	return out, nil
}

// Get implements machines.Lister.
func (l Lister) Get(namespace, name string) (*clusterv1alpha1.MachineDeployment, error) {
	for _, md := range l {
		if md.Namespace == namespace && md.Name == name {
			return md, nil
		}
	}
	return nil, apierrors.NewNotFound(machinecontroller.MachineDeployments, name)
}

// UsingProfile implements machines.Lister.
func (l Lister) UsingProfile(p machinecontroller.Profile) ([]*clusterv1alpha1.MachineDeployment, error) {
	var out []*clusterv1alpha1.MachineDeployment
	for _, md := range l {
		if got, err := machinecontroller.ProfileOf(md, ProfileNamespace); err == nil && got.String() == p.String() {
			out = append(out, md)
		}
	}
	return out, nil
}

// SharingSecretNames implements machines.Lister.
func (l Lister) SharingSecretNames(ref machinecontroller.Ref) ([]*clusterv1alpha1.MachineDeployment, error) {
	var out []*clusterv1alpha1.MachineDeployment
	for _, md := range l {
		if machinecontroller.RefOf(md).SecretPrefix() == ref.SecretPrefix() {
			out = append(out, md)
		}
	}
	return out, nil
}

// MachineSet returns md's MachineSet name as machine-controller makes it:
// controlled by md, with md's revision and template.
func MachineSet(md *clusterv1alpha1.MachineDeployment, name string) *clusterv1alpha1.MachineSet {
	return &clusterv1alpha1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: md.Namespace, Name: name, UID: types.UID(md.Namespace + "-" + name),
			Labels:          md.Spec.Template.Labels,
			Annotations:     map[string]string{machinecontroller.AnnotationMDRevision: md.Annotations[machinecontroller.AnnotationMDRevision]},
			OwnerReferences: []metav1.OwnerReference{controllerRef("MachineDeployment", md.Name, md.UID)},
		},
		Spec: clusterv1alpha1.MachineSetSpec{Template: md.Spec.Template},
	}
}

// Machine returns ms's Machine name as machine-controller makes it:
// controlled by ms, with the template's labels and spec.
func Machine(ms *clusterv1alpha1.MachineSet, name string) *clusterv1alpha1.Machine {
	return &clusterv1alpha1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ms.Namespace, Name: name, UID: types.UID(ms.Namespace + "-" + name),
			Labels:            ms.Spec.Template.Labels,
			CreationTimestamp: metav1.Unix(1700000000, 0),
			OwnerReferences:   []metav1.OwnerReference{controllerRef("MachineSet", ms.Name, ms.UID)},
		},
		Spec: ms.Spec.Template.Spec,
	}
}

func controllerRef(kind, name string, uid types.UID) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion: clusterv1alpha1.SchemeGroupVersion.String(), Kind: kind, Name: name, UID: uid,
		Controller: &yes, BlockOwnerDeletion: &yes,
	}
}
