package syncer

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// drain runs sync for each key of q until q shuts down. A failure is logged
// with msg and retried with q's backoff, unless ctx ended (the next leader or
// run looks again); a positive retry asks to look at the key again then.
func drain(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], msg string,
	sync func(ctx context.Context, key string) (retry time.Duration, err error)) {
	for {
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		retry, err := sync(ctx, key)
		switch {
		case err != nil && ctx.Err() == nil:
			klog.FromContext(ctx).Error(err, msg, "key", key)
			q.AddRateLimited(key)
		case retry > 0:
			q.Forget(key)
			q.AddAfter(key, retry)
		default:
			q.Forget(key)
		}
		q.Done(key)
	}
}
