package bootreports

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// updateAttempts bounds the retries of a write that raced another.
const updateAttempts = 5

// Change makes the report of a machine from old, its stored report (nil for
// none or an unreadable one); old is not to be modified. An Outcome without
// a Report writes nothing.
type Change func(old *osm.BootReport) (Outcome, error)

// Update changes the report of machine, a machine of the MachineDeployment
// ref, in secrets (a client of Namespace): read, change, write with the
// read's resourceVersion, again when another write came between. Both the
// step subresource and the leader's completion from the Node write through
// it, so neither loses the other's write.
func Update(ctx context.Context, secrets typedcorev1.SecretInterface, ref machinecontroller.Ref, machine string, change Change) (Outcome, error) {
	var lastErr error
	for range updateAttempts {
		out, err := updateOnce(ctx, secrets, ref, machine, change)
		if err == nil || !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			return out, err
		}
		lastErr = err
	}
	return Outcome{}, fmt.Errorf("boot report of machine %s/%s changed under %d writes: %w", ref.Namespace, machine, updateAttempts, lastErr)
}

// updateOnce reads the report, changes it and writes it with the read's
// resourceVersion.
func updateOnce(ctx context.Context, secrets typedcorev1.SecretInterface, ref machinecontroller.Ref, machine string, change Change) (Outcome, error) {
	current, err := secrets.Get(ctx, SecretName(ref.Namespace, machine), metav1.GetOptions{})
	var old *osm.BootReport
	switch {
	case apierrors.IsNotFound(err):
		current = nil
	case err != nil:
		return Outcome{}, err
	default:
		if old, err = FromSecret(current); err != nil {
			// Unreadable (edited by someone else): start again.
			klog.ErrorS(err, "Replacing an unreadable boot report", "secret", klog.KObj(current))
			old = nil
		}
	}
	out, err := change(old)
	if err != nil || out.Report == nil {
		return out, err
	}
	secret, err := Secret(ref, out.Report)
	if err != nil {
		return out, err
	}
	if current == nil {
		_, err = secrets.Create(ctx, secret, metav1.CreateOptions{})
	} else {
		secret.ResourceVersion = current.ResourceVersion
		_, err = secrets.Update(ctx, secret, metav1.UpdateOptions{})
	}
	return out, err
}
