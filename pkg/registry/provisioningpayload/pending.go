package provisioningpayload

import (
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pendingRetryAfter is what a client is told to wait for a pending payload:
// the syncer creates a new MachineDeployment's tokens within moments.
const pendingRetryAfter = 1

// pendingError is the answer for a payload that is not there yet but will be
// without anyone acting: 503 with Retry-After, which client-go and kubectl
// retry on their own, rather than a 500 that reads as a server fault or a 404
// that reads as a wrong name.
func (r *REST) pendingError(name, reason string) *errors.StatusError {
	return &errors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure,
		Code:   http.StatusServiceUnavailable,
		Reason: metav1.StatusReasonServiceUnavailable,
		Details: &metav1.StatusDetails{
			Group:             r.groupResource.Group,
			Kind:              r.groupResource.Resource,
			Name:              name,
			RetryAfterSeconds: pendingRetryAfter,
		},
		Message: fmt.Sprintf("%s %q is pending: %s", r.groupResource.String(), name, reason),
	}}
}
