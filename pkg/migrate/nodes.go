package migrate

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// What upstream's payloads hand to nodes, and the Machines that may still be
// booting with them.

func (s *State) findGetter(ctx context.Context, c kubernetes.Interface) error {
	ns := machinecontroller.CloudInitSettingsNamespace
	// The token first: deleting it revokes it at once.
	for _, o := range []struct {
		object Object
		get    func() error
	}{
		{Object{Kind: "Secret", Namespace: ns, Name: GetterTokenSecret}, func() error {
			_, err := c.CoreV1().Secrets(ns).Get(ctx, GetterTokenSecret, metav1.GetOptions{})
			return err
		}},
		{Object{Kind: "ServiceAccount", Namespace: ns, Name: GetterName}, func() error {
			_, err := c.CoreV1().ServiceAccounts(ns).Get(ctx, GetterName, metav1.GetOptions{})
			return err
		}},
		{Object{Kind: "RoleBinding", Namespace: ns, Name: GetterName}, func() error {
			_, err := c.RbacV1().RoleBindings(ns).Get(ctx, GetterName, metav1.GetOptions{})
			return err
		}},
		{Object{Kind: "Role", Namespace: ns, Name: GetterName}, func() error {
			_, err := c.RbacV1().Roles(ns).Get(ctx, GetterName, metav1.GetOptions{})
			return err
		}},
	} {
		switch err := o.get(); {
		case err == nil:
			s.Getter = append(s.Getter, o.object)
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("failed to get %s: %w", o.object, err)
		}
	}
	return nil
}

func (s *State) findMachines(ctx context.Context, c Clients) error {
	list, err := c.WorkerDynamic.Resource(MachineResource).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil // No Machine CRD: nothing can be joining.
	}
	if err != nil {
		return fmt.Errorf("failed to list machines: %w", err)
	}
	s.Machines = true
	for _, m := range list.Items {
		node, _, _ := unstructured.NestedMap(m.Object, "status", "nodeRef")
		if len(node) == 0 && m.GetDeletionTimestamp() == nil {
			s.Joining = append(s.Joining, m.GetNamespace()+"/"+m.GetName())
		}
	}
	slices.Sort(s.Joining)
	return nil
}
