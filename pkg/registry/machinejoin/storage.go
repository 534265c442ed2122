// Package machinejoin serves machinejoins: the create-only request with
// which a booting node exchanges the fetch credential of its user-data for
// the join credentials of its machine (pkg/nodejoin). Like a TokenRequest,
// nothing is stored: the answer is in the status of the created object.
package machinejoin

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
)

// Joiner answers MachineJoins (*nodejoin.Exchange).
type Joiner interface {
	Join(ctx context.Context, r nodejoin.Request) (*nodejoin.Answer, error)
}

// REST is the storage of machinejoins.
type REST struct {
	joiner Joiner
}

var (
	_ rest.Storage              = &REST{}
	_ rest.Creater              = &REST{}
	_ rest.Scoper               = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

// NewREST returns the storage answering MachineJoins with joiner.
func NewREST(joiner Joiner) *REST {
	return &REST{joiner: joiner}
}

var resource = osm.Resource(registry.MachineJoins)

// New implements rest.Storage.
func (r *REST) New() runtime.Object {
	return &osm.MachineJoin{}
}

// Destroy implements rest.Storage.
func (r *REST) Destroy() {}

// NamespaceScoped implements rest.Scoper: a MachineJoin is posted in the
// namespace of the machine and its MachineDeployment.
func (r *REST) NamespaceScoped() bool {
	return true
}

// GetSingularName implements rest.SingularNameProvider.
func (r *REST) GetSingularName() string {
	return "machinejoin"
}

// Create implements rest.Creater: it answers the request, or refuses it with
// 403 and the reason, or says 503 when it cannot answer yet.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	req, ok := obj.(*osm.MachineJoin)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a MachineJoin: %T", obj))
	}
	if errs := validate(req); len(errs) > 0 {
		return nil, apierrors.NewInvalid(osm.Kind("MachineJoin"), req.Spec.MachineName, errs)
	}
	if len(options.DryRun) > 0 {
		return nil, apierrors.NewBadRequest("a MachineJoin cannot be a dry run: the first one is the machine's only answer")
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	namespace := genericapirequest.NamespaceValue(ctx)
	user, _ := genericapirequest.UserFrom(ctx)
	answer, err := r.joiner.Join(ctx, nodejoin.Request{User: user, Namespace: namespace, MachineName: req.Spec.MachineName, BootID: req.Spec.BootID, BootSecret: req.Spec.BootSecret})
	var refused *nodejoin.RefusedError
	var unavailable *nodejoin.UnavailableError
	switch {
	case errors.As(err, &refused):
		return nil, apierrors.NewForbidden(resource, req.Spec.MachineName, refused)
	case errors.As(err, &unavailable):
		return nil, registry.ServiceUnavailable(fmt.Sprintf("machinejoin of machine %s/%s cannot be answered yet: %s", namespace, req.Spec.MachineName, unavailable.Reason),
			metav1.StatusDetails{Group: resource.Group, Kind: resource.Resource, Name: req.Spec.MachineName})
	case err != nil:
		return nil, apierrors.NewInternalError(err)
	}
	out := &osm.MachineJoin{
		ObjectMeta: metav1.ObjectMeta{Name: req.Spec.MachineName, Namespace: namespace, CreationTimestamp: metav1.Now()},
		// The boot secret goes back to no one.
		Spec: osm.MachineJoinSpec{MachineName: req.Spec.MachineName, BootID: req.Spec.BootID},
		Status: osm.MachineJoinStatus{
			Kubeconfig:                answer.Kubeconfig,
			ExpirationTimestamp:       metav1.NewTime(answer.Expiration),
			Provisioning:              answer.Provisioning,
			ProvisioningFormat:        answer.ProvisioningFormat,
			Profile:                   osm.ProfileReference{Namespace: answer.Profile.Namespace, Name: answer.Profile.Name, Version: answer.Profile.Version},
			MachineDeploymentRevision: answer.Revision,
		},
	}
	return out, nil
}

// bootIDRE is what a boot id looks like: /proc/sys/kernel/random/boot_id is
// a UUID; anything of its alphabet is taken.
var bootIDRE = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// bootSecretRE is what a boot secret may be: enough random letters and digits
// (the default profiles send 32 hex digits).
var bootSecretRE = regexp.MustCompile(`^[A-Za-z0-9]{32,128}$`)

func validate(req *osm.MachineJoin) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if req.Spec.MachineName == "" {
		errs = append(errs, field.Required(spec.Child("machineName"), "the machine's name, as machine-controller wrote it into the user-data"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(req.Spec.MachineName) {
			errs = append(errs, field.Invalid(spec.Child("machineName"), req.Spec.MachineName, msg))
		}
	}
	if !bootIDRE.MatchString(req.Spec.BootID) {
		errs = append(errs, field.Invalid(spec.Child("bootID"), req.Spec.BootID, "must be the node's boot id (/proc/sys/kernel/random/boot_id): 1-64 letters, digits and dashes"))
	}
	if req.Spec.BootSecret != "" && !bootSecretRE.MatchString(req.Spec.BootSecret) {
		// Never echo a secret, even a malformed one.
		errs = append(errs, field.Invalid(spec.Child("bootSecret"), "(not shown)", "must be 32-128 letters and digits the boot made at random"))
	}
	if req.Name != "" && req.Name != req.Spec.MachineName {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), req.Name, "must be empty or the machine's name"))
	}
	return errs
}
