package syncer

import (
	"context"
	"errors"
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// ReasonCompatibilityMode: the MD's profile reads the MD's Secrets, as
// profiles written for upstream OSM do, instead of posting a MachineJoin.
const ReasonCompatibilityMode = "CompatibilityMode"

// warnCompatibility says once per leadership term and profile revision, in a
// Warning Event on md, what nodes of an MD in the compatibility mode read
// with the credential of their user-data, and that it is weaker (the OSC's
// status.nodeJoin says it too).
func (c *Controller) warnCompatibility(md *clusterv1alpha1.MachineDeployment, out *resolve.Rendered) {
	profile := fmt.Sprintf("%s/%s@%s", out.Profile.Namespace, out.Profile.Name, out.Profile.Version)
	if before, seen := c.compatibility.Swap(machinecontroller.RefOf(md), profile); seen && before == profile {
		return
	}
	c.recorder.Eventf(machinecontroller.ObjectReference(md), corev1.EventTypeWarning, ReasonCompatibilityMode, "OperatingSystemProfile %s: %s",
		profile, resolve.NodeJoinStatus(osm.NodeJoinCompatibility).Message)
}

// removeCompatibility deletes what md had in the compatibility mode — the
// kubelet bootstrap token, its kubeconfig Secret, the provisioning Secret and
// the fetch Role and RoleBinding — once none of md's Machines is still
// joining: one created before md's profile switched to MachineJoin boots with
// the user-data of before, which reads them. Its caches say whether there is
// anything to delete, so steady-state syncs cost no API call.
func (c *Controller) removeCompatibility(ctx context.Context, md *clusterv1alpha1.MachineDeployment) error {
	ref := machinecontroller.RefOf(md)
	secrets := c.compatibilitySecrets(ref)
	_, roleErr := c.owned.roleLister().Roles(machinecontroller.CloudInitSettingsNamespace).Get(tokens.FetchAccessName(ref))
	_, bindingErr := c.owned.roleBindingLister().RoleBindings(machinecontroller.CloudInitSettingsNamespace).Get(tokens.FetchAccessName(ref))
	_, hasToken := tokens.Lookup(c.cfg.Tokens.Index(), ref, tokens.PurposeKubelet)
	if len(secrets) == 0 && roleErr != nil && bindingErr != nil && !hasToken {
		return nil
	}
	if joining, err := c.joining(ref); err != nil || joining {
		return err
	}
	errs := []error{c.tokens.DeletePurpose(ctx, ref, tokens.PurposeKubelet)}
	for _, s := range secrets {
		err := c.cfg.Client.CoreV1().Secrets(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("failed to delete secret %s/%s of %s: %w", s.Namespace, s.Name, ref, err))
		}
	}
	if roleErr == nil || bindingErr == nil {
		errs = append(errs, c.rbac.Delete(ctx, ref))
	}
	return errors.Join(errs...)
}

// compatibilitySecrets are md's Secrets of the compatibility mode that the
// payload informer holds.
func (c *Controller) compatibilitySecrets(ref machinecontroller.Ref) []*corev1.Secret {
	var out []*corev1.Secret
	for _, name := range []string{
		machinecontroller.SecretName(ref.Name, ref.Namespace, osm.PayloadTypeProvisioning),
		machinecontroller.KubeletBootstrapSecretName(ref.Name, ref.Namespace),
	} {
		s, err := c.payloads.Secrets(machinecontroller.CloudInitSettingsNamespace).Get(name)
		if err != nil {
			continue
		}
		if owner, ok := machinecontroller.Owner(s); ok && owner == ref {
			out = append(out, s)
		}
	}
	return out
}

// joining says whether a Machine of ref has no Node yet; false when the
// syncer does not watch Machines.
func (c *Controller) joining(ref machinecontroller.Ref) (bool, error) {
	if c.cfg.Machines == nil {
		return false, nil
	}
	machines, err := c.cfg.Machines.OfMachineDeployment(ref)
	if err != nil {
		return false, err
	}
	for _, m := range machines {
		if _, joined := c.cfg.Machines.NodeOf(m); !joined && m.DeletionTimestamp == nil {
			return true, nil
		}
	}
	return false, nil
}
