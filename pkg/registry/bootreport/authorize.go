package bootreport

import (
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"
)

// authorize returns the MachineDeployment of machine when u may report its
// boot: u is the fetch credential of an MD of namespace, and the machine
// belongs to that MD. Otherwise a 403 says why.
func (r *StepREST) authorize(u user.Info, namespace, machine string) (*clusterv1alpha1.MachineDeployment, error) {
	forbidden := func(format string, args ...any) error {
		return apierrors.NewForbidden(resource, machine, fmt.Errorf(format, args...))
	}
	ref, ok := r.cfg.Caller(u)
	if !ok {
		name := "nobody"
		if u != nil {
			name = u.GetName()
		}
		return nil, forbidden("only the fetch credential of a machine's MachineDeployment may report its boot, and %s is none", name)
	}
	if ref.Namespace != namespace {
		return nil, forbidden("the caller is the fetch credential of machinedeployment %s, not of one in namespace %s", ref, namespace)
	}
	md, err := r.cfg.MachineDeployments.Get(ref.Namespace, ref.Name)
	if err != nil || md.DeletionTimestamp != nil {
		return nil, forbidden("machinedeployment %s is gone", ref)
	}
	owner, err := r.cfg.Machines.Owner(namespace, machine)
	switch {
	case apierrors.IsNotFound(err):
		return nil, forbidden("machine %s/%s is not known", namespace, machine)
	case err != nil:
		return nil, forbidden("%v", err)
	case owner.MachineDeployment != ref:
		return nil, forbidden("machine %s/%s belongs to machinedeployment %s, not to %s", namespace, machine, owner.MachineDeployment, ref)
	case owner.UID != md.UID:
		return nil, forbidden("machine %s/%s belongs to an earlier machinedeployment %s", namespace, machine, ref)
	}
	return md, nil
}
