package registry

import (
	"context"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed"
)

// retryAfterSeconds is what a client is told to wait before it tries again
// a request the server cannot answer yet: informers list within moments, and
// the syncer creates a new MachineDeployment's tokens as fast.
const retryAfterSeconds = 1

// ServiceUnavailable is a 503 with details and a Retry-After.
func ServiceUnavailable(message string, details metav1.StatusDetails) *apierrors.StatusError {
	details.RetryAfterSeconds = retryAfterSeconds
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusServiceUnavailable,
		Reason:  metav1.StatusReasonServiceUnavailable,
		Details: &details,
		Message: message,
	}}
}

// ListPosition returns the position a LIST reads at: the feed's current
// one. A requested resourceVersion is honoured as kube-apiserver does: the
// current state is never older than one the cluster issued (NotOlderThan,
// the default), a future one is refused with 504 "Too large resource
// version", and Exact is served only for the current position.
func ListPosition(ctx context.Context, feed *changefeed.Feed, options *metainternalversion.ListOptions) (changefeed.Position, error) {
	pos, err := feed.Position(ctx)
	if err != nil {
		return changefeed.Position{}, FeedError(err)
	}
	if options == nil || options.ResourceVersion == "" || options.ResourceVersion == "0" {
		return pos, nil
	}
	want, err := changefeed.Parse(options.ResourceVersion)
	if err != nil {
		return changefeed.Position{}, FeedError(err)
	}
	if options.ResourceVersionMatch == metav1.ResourceVersionMatchExact {
		if !want.Equal(pos) {
			return changefeed.Position{}, apierrors.NewResourceExpired("resourceVersion " + options.ResourceVersion + " is not the current one: only the current state is served")
		}
		return pos, nil
	}
	if err := feed.Check(ctx, want); err != nil {
		return changefeed.Position{}, FeedError(err)
	}
	return pos, nil
}

// FeedError returns the API status of an error of the change feed.
func FeedError(err error) error {
	var (
		tooOld   *changefeed.TooOldError
		tooLarge *changefeed.TooLargeError
		notReady *changefeed.NotReadyError
	)
	switch {
	case errors.As(err, &tooOld):
		return apierrors.NewResourceExpired(err.Error())
	case errors.As(err, &tooLarge):
		// As kube-apiserver (k8s.io/apiserver/pkg/storage.NewTooLargeResourceVersionError):
		// client-go's reflector then lists from the current state.
		status := apierrors.NewTimeoutError("Too large resource version: "+tooLarge.Requested+", current: "+tooLarge.Current, retryAfterSeconds)
		status.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
		return status
	case errors.As(err, &notReady):
		return ServiceUnavailable(err.Error(), metav1.StatusDetails{})
	case errors.Is(err, changefeed.ErrMalformed):
		return apierrors.NewBadRequest(err.Error())
	}
	return apierrors.NewInternalError(err)
}
