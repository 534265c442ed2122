package syncer

import (
	"context"
	"sync"

	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/defaultosps"
)

// Run is what osm-apiserver runs in the background on every replica: it stands
// for election and, while leading, installs the default profiles (unless
// installer is nil), runs each of leading (returning when its context ends)
// and syncs. The informers of cfg must be started by the caller; they keep
// serving the API whoever leads. Run returns when ctx ends.
func Run(ctx context.Context, le LeaderElection, installer *defaultosps.Installer, cfg Config, leading ...func(context.Context)) error {
	logger := klog.FromContext(ctx).WithName("syncer")
	return RunLeaderElected(ctx, le, func(ctx context.Context) {
		if installer != nil {
			go installer.Run(ctx)
		}
		var tasks sync.WaitGroup
		defer tasks.Wait()
		for _, run := range leading {
			tasks.Go(func() { run(ctx) })
		}
		c, err := New(cfg)
		if err != nil {
			logger.Error(err, "Syncer misconfigured, not syncing")
			<-ctx.Done()
			return
		}
		if err := c.Run(ctx); err != nil {
			logger.Error(err, "Syncer stopped")
		}
	})
}
