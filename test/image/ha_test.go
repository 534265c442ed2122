package image

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestManifestsAreHighlyAvailable: artifacts/deploy, alone and with each of
// its components (each must render with `kubectl kustomize`), runs two
// replicas with leader election, spread over nodes (required) and zones
// (preferred), rolled out without losing a ready replica, each drained one
// at a time (a PodDisruptionBudget that selects them), with memory requested
// and limited; a ServiceMonitor scrapes a named port of the Service.
func TestManifestsAreHighlyAvailable(t *testing.T) {
	base := filepath.Join(repo(), "artifacts", "deploy")
	components, err := filepath.Glob(filepath.Join(base, "components", "*", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(components) == 0 {
		t.Fatal("artifacts/deploy/components has no component")
	}
	dirs := map[string]string{"artifacts/deploy": base}
	for _, c := range components {
		dir := filepath.Dir(c)
		rel, _ := filepath.Rel(repo(), dir)
		dirs[rel] = withComponent(t, base, dir)
	}
	for name, dir := range dirs {
		t.Run(filepath.Base(name), func(t *testing.T) {
			objects := kustomize(t, dir)
			checkHighlyAvailable(t, name, objects)
		})
	}
}

// withComponent writes a kustomization of base with the component in dir.
func withComponent(t *testing.T, base, component string) string {
	t.Helper()
	dir := t.TempDir()
	rel := func(to string) string {
		r, err := filepath.Rel(dir, to)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.ToSlash(r)
	}
	content := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " + rel(base) +
		"\ncomponents:\n- " + rel(component) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func checkHighlyAvailable(t *testing.T, name string, objects []*unstructured.Unstructured) {
	d := deployment(t, objects)
	spec := d.Spec.Template.Spec
	podLabels := labels.Set(d.Spec.Template.Labels)
	if r := d.Spec.Replicas; r == nil || *r != 2 {
		t.Errorf("%s: the Deployment's replicas are %s, want 2", name, ptrString(r))
	}
	if v := flagValue(spec.Containers[0].Args, "leader-elect"); v == "false" {
		t.Errorf("%s: --leader-elect=false: two replicas would both run the syncer", name)
	}
	if spec.PriorityClassName != "system-cluster-critical" {
		t.Errorf("%s: priorityClassName %q, want system-cluster-critical", name, spec.PriorityClassName)
	}
	s := d.Spec.Strategy
	if s.Type != "RollingUpdate" || s.RollingUpdate == nil || s.RollingUpdate.MaxUnavailable == nil || s.RollingUpdate.MaxSurge == nil ||
		s.RollingUpdate.MaxUnavailable.String() != "0" || s.RollingUpdate.MaxSurge.String() != "1" {
		t.Errorf("%s: strategy %+v, want RollingUpdate with maxUnavailable 0 and maxSurge 1", name, s)
	}

	spread := map[string]corev1.UnsatisfiableConstraintAction{}
	for _, c := range spec.TopologySpreadConstraints {
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil || c.LabelSelector == nil || !sel.Matches(podLabels) {
			t.Errorf("%s: the spread over %s does not select the Deployment's pods", name, c.TopologyKey)
			continue
		}
		spread[c.TopologyKey] = c.WhenUnsatisfiable
	}
	for key, want := range map[string]corev1.UnsatisfiableConstraintAction{
		corev1.LabelHostname:     corev1.DoNotSchedule,
		corev1.LabelTopologyZone: corev1.ScheduleAnyway,
	} {
		if got, ok := spread[key]; !ok || got != want {
			t.Errorf("%s: topology spread over %s: %q (set: %t), want %s", name, key, got, ok, want)
		}
	}

	r := spec.Containers[0].Resources
	if r.Requests.Cpu().IsZero() || r.Requests.Memory().IsZero() || r.Limits.Memory().Cmp(*r.Requests.Memory()) <= 0 {
		t.Errorf("%s: resources %v, want CPU and memory requested and a memory limit above the request", name, r)
	}

	var pdbs []*policyv1.PodDisruptionBudget
	for _, o := range objects {
		if o.GetKind() != "PodDisruptionBudget" {
			continue
		}
		p := &policyv1.PodDisruptionBudget{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, p); err != nil {
			t.Fatal(err)
		}
		if sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector); err == nil && p.Namespace == d.Namespace && sel.Matches(podLabels) {
			pdbs = append(pdbs, p)
		}
	}
	if len(pdbs) != 1 {
		t.Fatalf("%s: %d PodDisruptionBudgets select the Deployment's pods, want 1", name, len(pdbs))
	}
	p := pdbs[0].Spec
	if !(p.MaxUnavailable != nil && p.MaxUnavailable.String() == "1" && p.MinAvailable == nil ||
		p.MinAvailable != nil && p.MinAvailable.String() == "1" && p.MaxUnavailable == nil) {
		t.Errorf("%s: PodDisruptionBudget minAvailable %v maxUnavailable %v, want one of them 1", name, p.MinAvailable, p.MaxUnavailable)
	}

	checkServiceMonitors(t, name, objects)
}

// checkServiceMonitors: each ServiceMonitor selects the osm-apiserver
// Service in its namespace and scrapes one of its named ports.
func checkServiceMonitors(t *testing.T, name string, objects []*unstructured.Unstructured) {
	var svc *corev1.Service
	for _, o := range objects {
		if o.GetKind() == "Service" && o.GetName() == "osm-apiserver" {
			svc = &corev1.Service{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, svc); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, o := range objects {
		if o.GetKind() != "ServiceMonitor" {
			continue
		}
		if svc == nil {
			t.Fatalf("%s: a ServiceMonitor but no Service osm-apiserver", name)
		}
		matchLabels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector", "matchLabels")
		namespaces, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "namespaceSelector", "matchNames")
		if len(matchLabels) == 0 || !labels.SelectorFromSet(matchLabels).Matches(labels.Set(svc.Labels)) ||
			len(namespaces) != 1 || namespaces[0] != svc.Namespace {
			t.Errorf("%s: ServiceMonitor %s selects %v in %v, not Service %s/%s", name, o.GetName(), matchLabels, namespaces, svc.Namespace, svc.Name)
		}
		endpoints, _, _ := unstructured.NestedSlice(o.Object, "spec", "endpoints")
		if len(endpoints) == 0 {
			t.Errorf("%s: ServiceMonitor %s has no endpoints", name, o.GetName())
		}
		for _, e := range endpoints {
			port, _, _ := unstructured.NestedString(e.(map[string]any), "port")
			found := false
			for _, p := range svc.Spec.Ports {
				found = found || p.Name != "" && p.Name == port
			}
			if !found {
				t.Errorf("%s: ServiceMonitor %s scrapes port %q, which the Service does not name", name, o.GetName(), port)
			}
		}
	}
}

func ptrString(n *int32) string {
	if n == nil {
		return "unset"
	}
	return itoa(int64(*n))
}
