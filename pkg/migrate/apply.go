package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// ErrBlocked is Apply's error when the plan is blocked.
var ErrBlocked = errors.New("the migration is blocked")

// Apply does the steps of p that need not wait, in order, and reports each
// step through done: with its error when it was done, with none when it
// waits (s.Wait). Every step is idempotent: what is gone already counts as
// done. It stops at the first failure.
func Apply(ctx context.Context, c Clients, p *Plan, done func(i int, s Step, err error)) error {
	if len(p.Blocked) > 0 {
		return ErrBlocked
	}
	for i, s := range p.Steps {
		if s.Wait != "" {
			done(i, s, nil)
			continue
		}
		err := apply(ctx, c, s)
		done(i, s, err)
		if err != nil {
			return fmt.Errorf("step %d, %s: %w", i+1, s.Action, err)
		}
	}
	return nil
}

func apply(ctx context.Context, c Clients, s Step) error {
	if s.Action == RemoveFinalizer {
		return removeFinalizer(ctx, c, s.MD)
	}
	for _, o := range s.Objects {
		if err := remove(ctx, c, o); err != nil {
			return err
		}
	}
	if s.Action == DeleteOSCCRD {
		// The CRD goes once kube-apiserver has deleted its objects: then
		// discovery serves only our operatingsystemconfigs.
		return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := c.ManagementDynamic.Resource(CRDResource).Get(ctx, OSCCRD, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
	}
	return nil
}

// remove deletes o; gone already is fine.
func remove(ctx context.Context, c Clients, o Object) error {
	client := c.Worker
	if o.Management {
		client = c.Management
	}
	opts := metav1.DeleteOptions{}
	if o.UID != "" {
		// What Find read, and found upstream's, and nothing that replaced it.
		opts.Preconditions = &metav1.Preconditions{UID: &o.UID}
	}
	var err error
	switch o.Kind {
	case "Secret":
		err = client.CoreV1().Secrets(o.Namespace).Delete(ctx, o.Name, opts)
	case "ServiceAccount":
		err = client.CoreV1().ServiceAccounts(o.Namespace).Delete(ctx, o.Name, opts)
	case "Role":
		err = client.RbacV1().Roles(o.Namespace).Delete(ctx, o.Name, opts)
	case "RoleBinding":
		err = client.RbacV1().RoleBindings(o.Namespace).Delete(ctx, o.Name, opts)
	case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
		err = deleteWebhookConfiguration(ctx, client, o, opts)
	case "OperatingSystemConfig." + Group:
		err = c.ManagementDynamic.Resource(OSCResource).Namespace(o.Namespace).Delete(ctx, o.Name, opts)
	case "CustomResourceDefinition":
		err = c.ManagementDynamic.Resource(CRDResource).Delete(ctx, o.Name, opts)
	default:
		return fmt.Errorf("cannot delete %s: unknown kind", o)
	}
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err) && o.UID != "":
		return fmt.Errorf("%s was replaced since migrate read it (uid %s), not deleted: run migrate again: %w", o, o.UID, err)
	}
	return fmt.Errorf("failed to delete %s: %w", o, err)
}

func deleteWebhookConfiguration(ctx context.Context, client kubernetes.Interface, o Object, opts metav1.DeleteOptions) error {
	if o.Kind == "MutatingWebhookConfiguration" {
		return client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, o.Name, opts)
	}
	return client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, o.Name, opts)
}

// removeFinalizer removes upstream's finalizer from the MD with a JSON patch
// that first tests it is where it was read: a concurrent change of the
// finalizers makes it fail, and it is read again.
func removeFinalizer(ctx context.Context, c Clients, ref machinecontroller.Ref) error {
	mds := c.WorkerDynamic.Resource(MachineDeploymentResource).Namespace(ref.Namespace)
	return wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 5}, func(ctx context.Context) (bool, error) {
		md, err := mds.Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("failed to get machinedeployment %s: %w", ref, err)
		}
		i := slices.Index(md.GetFinalizers(), Finalizer)
		if i < 0 {
			return true, nil
		}
		path := fmt.Sprintf("/metadata/finalizers/%d", i)
		patch, err := json.Marshal([]map[string]string{{"op": "test", "path": path, "value": Finalizer}, {"op": "remove", "path": path}})
		if err != nil {
			return false, err
		}
		_, err = mds.Patch(ctx, ref.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return true, nil
		case apierrors.IsInvalid(err) || apierrors.IsConflict(err): // 422: a failed test
			return false, nil // The finalizers changed since: read them again.
		}
		return false, fmt.Errorf("failed to remove finalizer %s from machinedeployment %s: %w", Finalizer, ref, err)
	})
}
