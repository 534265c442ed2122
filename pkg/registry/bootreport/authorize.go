package bootreport

import (
	"context"
	"fmt"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// authorize returns the MachineDeployment of machine, and the Machine, when
// u may report its boot: u is the fetch credential of an MD of namespace,
// and the machine belongs to that MD. Otherwise a 403 says why.
func (r *StepREST) authorize(u user.Info, namespace, machine string) (*clusterv1alpha1.MachineDeployment, *clusterv1alpha1.Machine, error) {
	forbidden := func(format string, args ...any) error {
		return apierrors.NewForbidden(resource, machine, fmt.Errorf(format, args...))
	}
	ref, ok := r.cfg.Caller(u)
	if !ok {
		name := "nobody"
		if u != nil {
			name = u.GetName()
		}
		return nil, nil, forbidden("only the fetch credential of a machine's MachineDeployment may report its boot, and %s is none", name)
	}
	if ref.Namespace != namespace {
		return nil, nil, forbidden("the caller is the fetch credential of machinedeployment %s, not of one in namespace %s", ref, namespace)
	}
	md, err := r.cfg.MachineDeployments.Get(ref.Namespace, ref.Name)
	if err != nil || md.DeletionTimestamp != nil {
		return nil, nil, forbidden("machinedeployment %s is gone", ref)
	}
	owner, err := r.cfg.Machines.Owner(namespace, machine)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil, forbidden("machine %s/%s is not known", namespace, machine)
	case err != nil:
		return nil, nil, forbidden("%v", err)
	case owner.MachineDeployment != ref:
		return nil, nil, forbidden("machine %s/%s belongs to machinedeployment %s, not to %s", namespace, machine, owner.MachineDeployment, ref)
	case owner.UID != md.UID:
		return nil, nil, forbidden("machine %s/%s belongs to an earlier machinedeployment %s", namespace, machine, ref)
	}
	return md, owner.Machine, nil
}

// answeredBoot refuses a record of machine m without the secret of the boot
// m was answered to, once it was: the node that was answered alone holds it
// (the bootstrap keeps it for osm-report, so the node's later boots, as
// Flatcar's provisioning boot or one after a crash, still report), while the
// MD's fetch token is in every machine's user-data. Records of a machine not
// answered yet, or answered to a profile that sent no secret (older than
// v0.8.0), are not checked: there is nothing to check them by.
func (r *StepREST) answeredBoot(ctx context.Context, m *clusterv1alpha1.Machine, step *osm.BootStepSpec) error {
	if r.cfg.Answers == nil {
		return nil
	}
	rec, ok, err := r.cfg.Answers.Of(ctx, m)
	if err != nil {
		return apierrors.NewServiceUnavailable(err.Error())
	}
	if !ok || rec.HoldsSecret(step.BootSecret) {
		return nil
	}
	return apierrors.NewForbidden(resource, m.Name, fmt.Errorf("machine %s/%s was answered at %s to another boot: only that boot's node reports it",
		m.Namespace, m.Name, rec.AnsweredAt.Format(time.RFC3339)))
}
