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
	// The token first: deleting it revokes it at once. Each is deleted only
	// if it has the shape upstream gives it (ownership.go).
	for _, o := range []struct {
		kind string
		get  func() (metav1.Object, string, error)
	}{
		{"Secret", func() (metav1.Object, string, error) {
			got, err := c.CoreV1().Secrets(ns).Get(ctx, GetterTokenSecret, metav1.GetOptions{})
			if err != nil {
				return nil, "", err
			}
			return got, notUpstreamGetterToken(got), nil
		}},
		{"ServiceAccount", func() (metav1.Object, string, error) {
			got, err := c.CoreV1().ServiceAccounts(ns).Get(ctx, GetterName, metav1.GetOptions{})
			if err != nil {
				return nil, "", err
			}
			return got, ownerless(got.ObjectMeta), nil
		}},
		{"RoleBinding", func() (metav1.Object, string, error) {
			got, err := c.RbacV1().RoleBindings(ns).Get(ctx, GetterName, metav1.GetOptions{})
			if err != nil {
				return nil, "", err
			}
			return got, notUpstreamGetterBinding(got), nil
		}},
		{"Role", func() (metav1.Object, string, error) {
			got, err := c.RbacV1().Roles(ns).Get(ctx, GetterName, metav1.GetOptions{})
			if err != nil {
				return nil, "", err
			}
			return got, notUpstreamGetterRole(got), nil
		}},
	} {
		name := GetterName
		if o.kind == "Secret" {
			name = GetterTokenSecret
		}
		object := Object{Kind: o.kind, Namespace: ns, Name: name}
		got, why, err := o.get()
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("failed to get %s: %w", object, err)
		case why != "":
			object.UID = got.GetUID()
			s.Skipped = append(s.Skipped, Skip{Object: object, Reason: why})
		default:
			object.UID = got.GetUID()
			s.Getter = append(s.Getter, object)
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
