package tokens

import (
	"context"
	"errors"
	"fmt"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// AccessWriter creates, repairs and deletes the fetch Role and RoleBinding of
// MachineDeployments. It remembers what it wrote, so steady-state syncs cost no
// API calls; Forget makes the next Ensure read the objects again.
type AccessWriter struct {
	Client kubernetes.Interface
	// Namespace holds the payload Secrets, the Role and the RoleBinding.
	Namespace string

	mu      sync.Mutex
	written map[machinecontroller.Ref]record
}

// record is what AccessWriter wrote for one MachineDeployment. A stale record was
// written by this process but may have been changed since: it is read back
// (GET first) instead of created.
type record struct {
	names []string
	stale bool
}

// Ensure makes ref's fetch token able to GET secretNames, and only those.
func (w *AccessWriter) Ensure(ctx context.Context, ref machinecontroller.Ref, secretNames ...string) error {
	current, known := w.lookup(ref, secretNames)
	if current {
		return nil
	}
	// A MachineDeployment new to this process most likely has no RBAC yet:
	// create first, one call per object. Otherwise read first, as the
	// objects most likely exist.
	createFirst := !known
	if err := w.ensureRole(ctx, FetchRole(ref, w.Namespace, secretNames...), createFirst); err != nil {
		return fmt.Errorf("failed to ensure fetch role of %s: %w", ref, err)
	}
	if err := w.ensureBinding(ctx, FetchRoleBinding(ref, w.Namespace), createFirst); err != nil {
		return fmt.Errorf("failed to ensure fetch role binding of %s: %w", ref, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.written == nil {
		w.written = map[machinecontroller.Ref]record{}
	}
	w.written[ref] = record{names: append([]string(nil), secretNames...)}
	return nil
}

// Delete removes ref's Role and RoleBinding.
func (w *AccessWriter) Delete(ctx context.Context, ref machinecontroller.Ref) error {
	w.forget(ref)
	rbac := w.Client.RbacV1()
	var errs []error
	if err := rbac.RoleBindings(w.Namespace).Delete(ctx, FetchAccessName(ref), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("failed to delete fetch role binding of %s: %w", ref, err))
	}
	if err := rbac.Roles(w.Namespace).Delete(ctx, FetchAccessName(ref), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("failed to delete fetch role of %s: %w", ref, err))
	}
	return errors.Join(errs...)
}

// Forget marks everything AccessWriter remembers as stale, so that objects changed
// or deleted by someone else are repaired on the next Ensure.
func (w *AccessWriter) Forget() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ref, r := range w.written {
		r.stale = true
		w.written[ref] = r
	}
}

// Invalidate marks what AccessWriter remembers of ref as stale: someone else
// changed or deleted ref's Role or RoleBinding, and the next Ensure repairs it.
func (w *AccessWriter) Invalidate(ref machinecontroller.Ref) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r, ok := w.written[ref]; ok {
		r.stale = true
		w.written[ref] = r
	}
}

func (w *AccessWriter) forget(ref machinecontroller.Ref) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.written, ref)
}

// lookup says whether ref's RBAC is known to be current for names, and
// whether this process wrote it before.
func (w *AccessWriter) lookup(ref machinecontroller.Ref, names []string) (current, known bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, known := w.written[ref]
	return known && !r.stale && equality.Semantic.DeepEqual(r.names, names), known
}

func (w *AccessWriter) ensureRole(ctx context.Context, want *rbacv1.Role, createFirst bool) error {
	roles := w.Client.RbacV1().Roles(want.Namespace)
	got, err := getOrCreate(createFirst,
		func() (*rbacv1.Role, error) { return roles.Get(ctx, want.Name, metav1.GetOptions{}) },
		func() (*rbacv1.Role, error) { return roles.Create(ctx, want, metav1.CreateOptions{}) })
	if err != nil || got == nil {
		return err
	}
	if equality.Semantic.DeepEqual(got.Rules, want.Rules) && sameMeta(got.ObjectMeta, want.ObjectMeta) {
		return nil
	}
	updated := got.DeepCopy()
	updated.Rules, updated.Labels, updated.Annotations = want.Rules, want.Labels, want.Annotations
	_, err = roles.Update(ctx, updated, metav1.UpdateOptions{})
	return err
}

func (w *AccessWriter) ensureBinding(ctx context.Context, want *rbacv1.RoleBinding, createFirst bool) error {
	bindings := w.Client.RbacV1().RoleBindings(want.Namespace)
	got, err := getOrCreate(createFirst,
		func() (*rbacv1.RoleBinding, error) { return bindings.Get(ctx, want.Name, metav1.GetOptions{}) },
		func() (*rbacv1.RoleBinding, error) { return bindings.Create(ctx, want, metav1.CreateOptions{}) })
	if err != nil || got == nil {
		return err
	}
	if equality.Semantic.DeepEqual(got.Subjects, want.Subjects) && got.RoleRef == want.RoleRef && sameMeta(got.ObjectMeta, want.ObjectMeta) {
		return nil
	}
	if got.RoleRef != want.RoleRef {
		// roleRef is immutable: replace the binding.
		if err := bindings.Delete(ctx, want.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		_, err = bindings.Create(ctx, want, metav1.CreateOptions{})
		return err
	}
	updated := got.DeepCopy()
	updated.Subjects, updated.Labels, updated.Annotations = want.Subjects, want.Labels, want.Annotations
	_, err = bindings.Update(ctx, updated, metav1.UpdateOptions{})
	return err
}

func sameMeta(got, want metav1.ObjectMeta) bool {
	return equality.Semantic.DeepEqual(got.Labels, want.Labels) && equality.Semantic.DeepEqual(got.Annotations, want.Annotations)
}

// getOrCreate returns the existing object, or nil after creating it.
func getOrCreate[T any](createFirst bool, get, create func() (T, error)) (T, error) {
	var none T
	if createFirst {
		_, err := create()
		if !apierrors.IsAlreadyExists(err) {
			return none, err
		}
		return get()
	}
	got, err := get()
	if apierrors.IsNotFound(err) {
		_, err = create()
		return none, err
	}
	return got, err
}
