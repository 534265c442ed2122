package migrate

import (
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	osmfake "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

var secretsResource = corev1.SchemeGroupVersion.WithResource("secrets")

// now is the time of the fake clusters.
var now = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

const settings = machinecontroller.CloudInitSettingsNamespace

// cluster is one fake cluster holding upstream's leftovers, as both the
// management and the worker cluster.
type cluster struct {
	kube    *kubefake.Clientset
	dynamic *dynamicfake.FakeDynamicClient
	osm     *osmfake.Clientset
}

func (c *cluster) clients() Clients {
	return Clients{Management: c.kube, Worker: c.kube, ManagementDynamic: c.dynamic, WorkerDynamic: c.dynamic, OSM: c.osm}
}

// newCluster returns a cluster in the state upstream leaves, with
// osm-apiserver serving and its syncer done with MD e2e/a only:
//   - e2e/a: upstream's finalizer; its Secrets osm-apiserver's (revision 3);
//     upstream's kubelet bootstrap kubeconfig and bootstrap token left;
//   - e2e/b: upstream's finalizer; its Secrets still upstream's, its
//     profile missing (its OSC says so);
//   - e2e/gone: being deleted, held by upstream's finalizer, upstream's Secrets;
//   - e2e/plain: names no profile, no finalizer, Secrets osm-apiserver's;
//   - upstream's webhook configuration, machine-controller's too;
//   - the getter token with its ServiceAccount and RBAC;
//   - upstream's OSC CRD and two OSCs, its OSP CRD and its osp-ubuntu;
//   - upstream's controller Lease, last renewed an hour ago.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	hourAgo := metav1.NewMicroTime(now.Add(-time.Hour))
	holder := "osm-7d9"
	objects := []runtime.Object{
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: ControllerLease},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &hourAgo}},
		webhookConfiguration("operatingsystemmanager.k8c.io", "operating-system-manager-webhook"),
		webhookConfiguration("machine-controller.kubermatic.io", "machine-controller-webhook"),
	}
	objects = append(objects, upstreamGetter()...)
	objects = append(objects, upstreamCredentials("e2e-a", "abc123")...)
	for _, md := range []string{"a", "plain"} {
		objects = append(objects, ourPayloads(machinecontroller.Ref{Namespace: "e2e", Name: md}, "3")...)
	}
	for _, md := range []string{"b", "gone"} {
		for _, kind := range []string{"bootstrap", "provisioning"} {
			s := secret(settings, md+"-e2e-"+kind+"-config", nil, corev1.SecretTypeOpaque)
			s.Annotations = map[string]string{machinecontroller.AnnotationSecretMDRevision: "2"}
			objects = append(objects, s)
		}
	}
	kube := kubefake.NewClientset(objects...)
	kube.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{
		{GroupVersion: osmv1alpha1.SchemeGroupVersion.String(), APIResources: []metav1.APIResource{{Name: "operatingsystemconfigs"}}},
		{GroupVersion: OSCResource.GroupVersion().String(), APIResources: []metav1.APIResource{{Name: "operatingsystemconfigs"}}},
	}

	deleted := metav1.NewTime(now)
	dynamic := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		MachineDeploymentResource: "MachineDeploymentList", MachineResource: "MachineList",
		CRDResource: "CustomResourceDefinitionList", OSCResource: "OperatingSystemConfigList",
	},
		machineDeploymentObject("a", "osp-ubuntu", "3", []string{"keep.example.com/x", Finalizer}, nil),
		machineDeploymentObject("b", "custom", "2", []string{Finalizer}, nil),
		machineDeploymentObject("gone", "osp-ubuntu", "1", []string{Finalizer}, &deleted),
		machineDeploymentObject("plain", "", "3", nil, nil),
		object(CRDResource, "CustomResourceDefinition", "", "operatingsystemprofiles."+Group),
		object(CRDResource, "CustomResourceDefinition", "", OSCCRD),
		object(OSCResource, "OperatingSystemConfig", "kube-system", "a-e2e-config"),
		object(OSCResource, "OperatingSystemConfig", "kube-system", "b-e2e-config"),
	)
	osm := osmfake.NewSimpleClientset(
		&ospv1alpha1.OperatingSystemProfile{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "osp-ubuntu"},
			Spec: ospv1alpha1.OperatingSystemProfileSpec{Version: "v1.11.2"}},
		&ospv1alpha1.OperatingSystemProfile{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "osp-flatcar",
			Labels: map[string]string{machinecontroller.ManagedByLabel: machinecontroller.ManagedByValue}}},
		&osmv1alpha1.OperatingSystemConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "e2e", Name: "b"},
			Status: osmv1alpha1.OperatingSystemConfigStatus{RenderError: "operatingsystemprofile kube-system/custom not found"}},
	)
	return &cluster{kube: kube, dynamic: dynamic, osm: osm}
}

// upstreamGetter is the getter token, its ServiceAccount and RBAC, as
// upstream's manifests make them.
func upstreamGetter() []runtime.Object {
	token := secret(settings, GetterTokenSecret, nil, corev1.SecretTypeServiceAccountToken)
	token.Annotations = map[string]string{corev1.ServiceAccountNameKey: GetterName}
	return []runtime.Object{
		token,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: settings, Name: GetterName}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: settings, Name: GetterName},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: settings, Name: GetterName},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: GetterName},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: settings, Name: GetterName}}},
	}
}

// upstreamCredentials are the kubelet bootstrap kubeconfig Secret and the
// bootstrap token upstream makes for the MD of key (UpstreamKey).
func upstreamCredentials(key, id string) []runtime.Object {
	kubeconfig := secret(settings, key+"-kubelet-bootstrap-config", nil, corev1.SecretTypeOpaque)
	kubeconfig.Data = map[string][]byte{"kubeconfig": []byte("upstream's")}
	token := secret("kube-system", "bootstrap-token-"+id, map[string]string{BootstrapTokenLabel: key}, corev1.SecretTypeBootstrapToken)
	token.Data = map[string][]byte{"token-id": []byte(id), "token-secret": []byte("0123456789abcdef")}
	return []runtime.Object{kubeconfig, token}
}

func secret(namespace, name string, labels map[string]string, typ corev1.SecretType) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels}, Type: typ}
}

// ourPayloads are the payload Secrets osm-apiserver's syncer wrote for ref.
func ourPayloads(ref machinecontroller.Ref, revision string) []runtime.Object {
	var out []runtime.Object
	for _, kind := range []string{"bootstrap", "provisioning"} {
		s := secret(settings, ref.Name+"-"+ref.Namespace+"-"+kind+"-config", ref.Labels(kind+"-config"), corev1.SecretTypeOpaque)
		s.Annotations = ref.Annotations()
		s.Annotations[machinecontroller.AnnotationSecretMDRevision] = revision
		out = append(out, s)
	}
	return out
}

func webhookConfiguration(name, service string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "machinedeployments.cluster.k8s.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "kube-system", Name: service}}}},
	}
}

func object(r schema.GroupVersionResource, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(r.GroupVersion().String())
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func machineDeploymentObject(name, profile, revision string, finalizers []string, deleted *metav1.Time) *unstructured.Unstructured {
	u := object(MachineDeploymentResource, "MachineDeployment", "e2e", name)
	annotations := map[string]string{machinecontroller.AnnotationMDRevision: revision}
	if profile != "" {
		annotations[machinecontroller.AnnotationOSP] = profile
	}
	u.SetAnnotations(annotations)
	u.SetFinalizers(finalizers)
	u.SetDeletionTimestamp(deleted)
	_ = unstructured.SetNestedField(u.Object, map[string]any{"cloudProvider": "aws", "operatingSystem": "ubuntu"},
		"spec", "template", "spec", "providerSpec", "value")
	return u
}

// machine returns a Machine, joined (with a Node) or not.
func machine(name string, joined bool) *unstructured.Unstructured {
	u := object(MachineResource, "Machine", "e2e", name)
	if joined {
		_ = unstructured.SetNestedField(u.Object, map[string]any{"name": name}, "status", "nodeRef")
	}
	return u
}
