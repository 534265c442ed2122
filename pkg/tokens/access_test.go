package tokens

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
)

// The fetch role is bound to the MachineDeployment's own ServiceAccount, and
// to no group: a group is shared, and system:bootstrappers:* may be bound to
// node bootstrapping.
func TestFetchRoleBindingNamesTheServiceAccount(t *testing.T) {
	a := FetchRoleBinding(machinecontroller.Ref{Namespace: "a-b", Name: "c"}, "cloud-init-settings")
	b := FetchRoleBinding(machinecontroller.Ref{Namespace: "a", Name: "b-c"}, "cloud-init-settings")
	want := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: a.Name, Namespace: FetchNamespace}
	if len(a.Subjects) != 1 || a.Subjects[0] != want {
		t.Errorf("subjects %+v, want only %+v", a.Subjects, want)
	}
	if a.Subjects[0].Name == b.Subjects[0].Name {
		t.Error("different MachineDeployments share a service account")
	}
}

func TestAccessWriterEnsure(t *testing.T) {
	ref := machinecontroller.Ref{Namespace: "kube-system", Name: "workers"}
	ctx := context.Background()
	client := machinecontrollertest.NewClientset()
	w := &AccessWriter{Client: client, Namespace: "cloud-init-settings"}
	if err := w.Ensure(ctx, ref, "prov", "kubeconfig"); err != nil {
		t.Fatal(err)
	}
	role, err := client.RbacV1().Roles("cloud-init-settings").Get(ctx, FetchAccessName(ref), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{"prov", "kubeconfig"}}}
	if !equality.Semantic.DeepEqual(role.Rules, wantRules) {
		t.Errorf("rules %+v, want %+v", role.Rules, wantRules)
	}
	binding, err := client.RbacV1().RoleBindings("cloud-init-settings").Get(ctx, FetchAccessName(ref), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(binding.Subjects) != 1 || binding.Subjects[0].Kind != rbacv1.ServiceAccountKind || binding.Subjects[0].Name != FetchAccessName(ref) || binding.RoleRef.Name != role.Name {
		t.Errorf("binding %+v %+v, want service account %s bound to role %s", binding.Subjects, binding.RoleRef, FetchAccessName(ref), role.Name)
	}

	// Unchanged: no API call at all.
	client.ClearActions()
	if err := w.Ensure(ctx, ref, "prov", "kubeconfig"); err != nil {
		t.Fatal(err)
	}
	if n := len(client.Actions()); n != 0 {
		t.Errorf("%d API calls for an unchanged role", n)
	}

	// Tampered with, then forgotten: repaired.
	role.Rules[0].Verbs = []string{"get", "list"}
	if _, err := client.RbacV1().Roles("cloud-init-settings").Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.Forget()
	if err := w.Ensure(ctx, ref, "prov", "kubeconfig"); err != nil {
		t.Fatal(err)
	}
	role, _ = client.RbacV1().Roles("cloud-init-settings").Get(ctx, FetchAccessName(ref), metav1.GetOptions{})
	if !equality.Semantic.DeepEqual(role.Rules, wantRules) {
		t.Errorf("rules after repair %+v, want %+v", role.Rules, wantRules)
	}

	// Deleted by someone else, and invalidated by the watch that saw it: recreated.
	if err := client.RbacV1().Roles("cloud-init-settings").Delete(ctx, FetchAccessName(ref), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.Invalidate(machinecontroller.Ref{Namespace: "other", Name: "md"}) // another MD's: no effect here
	if err := w.Ensure(ctx, ref, "prov", "kubeconfig"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RbacV1().Roles("cloud-init-settings").Get(ctx, FetchAccessName(ref), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("role recreated without an invalidation: %v", err)
	}
	w.Invalidate(ref)
	if err := w.Ensure(ctx, ref, "prov", "kubeconfig"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RbacV1().Roles("cloud-init-settings").Get(ctx, FetchAccessName(ref), metav1.GetOptions{}); err != nil {
		t.Errorf("role after Invalidate and Ensure: %v", err)
	}

	if err := w.Delete(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RbacV1().Roles("cloud-init-settings").Get(ctx, FetchAccessName(ref), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("role after Delete: %v", err)
	}
	if _, err := client.RbacV1().RoleBindings("cloud-init-settings").Get(ctx, FetchAccessName(ref), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("binding after Delete: %v", err)
	}
}
