package syncer

import (
	"context"
	"errors"
	"fmt"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cleanup removes everything written for ref: payload and kubeconfig Secrets,
// tokens, the fetch ServiceAccount and RBAC, the machines' boot reports. It is label-based, so MachineDeployment deletion
// never waits for us.
func (c *Controller) cleanup(ctx context.Context, ref machinecontroller.Ref) error {
	var errs []error
	secrets, err := c.payloads.Secrets(machinecontroller.CloudInitSettingsNamespace).List(ref.Selector())
	if err != nil {
		errs = append(errs, err)
	}
	for _, s := range secrets {
		if owner, ok := machinecontroller.Owner(s); !ok || owner != ref {
			continue
		}
		err := c.cfg.Client.CoreV1().Secrets(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("failed to delete secret %s/%s of %s: %w", s.Namespace, s.Name, ref, err))
		}
	}
	// Deleting the fetch token's Secret and ServiceAccount revokes it.
	errs = append(errs, c.tokens.Delete(ctx, ref), c.fetch.Delete(ctx, ref), c.rbac.Delete(ctx, ref), c.cleanupReports(ctx, ref))
	return errors.Join(errs...)
}

// orphans returns the MachineDeployments that objects we wrote belong to but
// that are gone.
func (c *Controller) orphans() (map[machinecontroller.Ref]struct{}, error) {
	owners := map[machinecontroller.Ref]struct{}{}
	var errs []error
	for _, lister := range []func() ([]metav1.Object, error){
		func() ([]metav1.Object, error) {
			l, err := c.payloads.List(machinecontroller.ManagedSelector())
			return objects(l, err)
		},
		func() ([]metav1.Object, error) {
			l, err := c.cfg.Tokens.Lister().List(machinecontroller.ManagedSelector())
			return objects(l, err)
		},
		func() ([]metav1.Object, error) {
			l, err := c.cfg.Tokens.FetchLister().List(machinecontroller.ManagedSelector())
			return objects(l, err)
		},
		func() ([]metav1.Object, error) {
			l, err := c.owned.serviceAccountLister().List(machinecontroller.ManagedSelector())
			return objects(l, err)
		},
		func() ([]metav1.Object, error) {
			l, err := c.owned.roleLister().List(machinecontroller.ManagedSelector())
			return objects(l, err)
		},
		func() ([]metav1.Object, error) {
			if !c.reportsEnabled() {
				return nil, nil
			}
			return c.cfg.BootReports.List(), nil
		},
	} {
		objs, err := lister()
		if err != nil {
			errs = append(errs, err)
		}
		for _, o := range objs {
			if ref, ok := machinecontroller.Owner(o); ok {
				owners[ref] = struct{}{}
			}
		}
	}
	for ref := range owners {
		if _, err := c.mds.Get(ref.Namespace, ref.Name); err == nil {
			delete(owners, ref)
		}
	}
	return owners, errors.Join(errs...)
}

func objects[T metav1.Object](list []T, err error) ([]metav1.Object, error) {
	out := make([]metav1.Object, len(list))
	for i, o := range list {
		out[i] = o
	}
	return out, err
}
