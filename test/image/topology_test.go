package image

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestManagementWorkerManifests: artifacts/deploy with the component
// management-worker (the management cluster) and artifacts/deploy-worker
// (the worker cluster) render with `kubectl kustomize` and split
// artifacts/deploy between them. The management cluster runs the Deployment,
// with --worker-cluster-kubeconfig from a Secret's volume and no explicit
// delegation flags (they default to the worker cluster), and has no
// APIService; the worker cluster has the APIService, behind an ExternalName
// Service, and no pods; every binding there is to the identity of the
// worker kubeconfig, the ServiceAccount kube-system/osm-apiserver.
func TestManagementWorkerManifests(t *testing.T) {
	base := filepath.Join(repo(), "artifacts", "deploy")
	management := kustomize(t, withComponent(t, base, filepath.Join(base, "components", "management-worker")))
	worker := kustomize(t, filepath.Join(repo(), "artifacts", "deploy-worker"))

	c := deployment(t, management).Spec.Template.Spec
	args := c.Containers[0].Args
	kubeconfig := flagValue(args, "worker-cluster-kubeconfig")
	secret := ""
	for _, m := range c.Containers[0].VolumeMounts {
		if strings.HasPrefix(kubeconfig, m.MountPath+"/") {
			for _, v := range c.Volumes {
				if v.Name == m.Name && v.Secret != nil {
					secret = v.Secret.SecretName
				}
			}
		}
	}
	if secret != "osm-apiserver-worker-kubeconfig" {
		t.Errorf("--worker-cluster-kubeconfig=%q is in Secret %q, want osm-apiserver-worker-kubeconfig", kubeconfig, secret)
	}
	for _, flag := range []string{"authentication-kubeconfig", "authorization-kubeconfig"} {
		if v := flagValue(args, flag); v != "" {
			t.Errorf("--%s=%s: delegation must default to the worker cluster", flag, v)
		}
	}
	if n := len(kinds(management, "APIService")); n != 0 {
		t.Errorf("the management cluster gets %d APIServices, want none: nodes authenticate at the worker cluster", n)
	}
	// The management side keeps what runs the pods; the worker side none of it.
	for _, kind := range []string{"Deployment", "PodDisruptionBudget"} {
		if n := len(kinds(worker, kind)); n != 0 {
			t.Errorf("the worker cluster gets %d %ss, want none", n, kind)
		}
	}

	apiServices := kinds(worker, "APIService")
	if len(apiServices) != 1 {
		t.Fatalf("the worker cluster gets %d APIServices, want 1", len(apiServices))
	}
	svcName, _, _ := unstructured.NestedString(apiServices[0].Object, "spec", "service", "name")
	svcNamespace, _, _ := unstructured.NestedString(apiServices[0].Object, "spec", "service", "namespace")
	var svc *unstructured.Unstructured
	for _, o := range kinds(worker, "Service") {
		if o.GetName() == svcName && o.GetNamespace() == svcNamespace {
			svc = o
		}
	}
	if svc == nil {
		t.Fatalf("the worker cluster has no Service %s/%s for the APIService", svcNamespace, svcName)
	}
	typ, _, _ := unstructured.NestedString(svc.Object, "spec", "type")
	external, _, _ := unstructured.NestedString(svc.Object, "spec", "externalName")
	_, hasSelector, _ := unstructured.NestedFieldNoCopy(svc.Object, "spec", "selector")
	if typ != "ExternalName" || external == "" || hasSelector {
		t.Errorf("Service %s/%s: type %q, externalName %q, selector %t; want an ExternalName Service without selector", svcNamespace, svcName, typ, external, hasSelector)
	}
	for _, o := range worker {
		if !strings.HasSuffix(o.GetKind(), "Binding") || o.GetKind() == "ValidatingAdmissionPolicyBinding" {
			continue
		}
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		for _, s := range subjects {
			m := s.(map[string]any)
			if m["kind"] == "ServiceAccount" && (m["name"] != "osm-apiserver" || m["namespace"] != "kube-system") {
				t.Errorf("%s binds ServiceAccount %s/%s, want kube-system/osm-apiserver", key(o), m["namespace"], m["name"])
			}
		}
	}

	// Nothing of artifacts/deploy is lost: each object goes to one cluster or both.
	placed := map[string]bool{}
	for _, o := range append(slices.Clone(management), worker...) {
		placed[key(o)] = true
	}
	for _, o := range kustomize(t, base) {
		if !placed[key(o)] {
			t.Errorf("%s of artifacts/deploy is in neither cluster", key(o))
		}
	}
}

// kinds are the objects of kind among objects.
func kinds(objects []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objects {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}
