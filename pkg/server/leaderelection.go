package server

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// LeaderElection configures the election that makes one replica the leader,
// the one that runs the leader's controllers (see leaderControllers).
type LeaderElection struct {
	// Enabled runs the election; without it every replica syncs.
	Enabled bool
	// Client manages the Lease (management cluster).
	Client kubernetes.Interface
	// Namespace and Name of the Lease.
	Namespace, Name string
	// Identity of this replica; hostname plus a random suffix if empty.
	Identity                                  string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// runLeaderElected runs the controllers whenever this replica leads, with a
// context that ends when leadership is lost, and stands for election again
// afterwards, until ctx is done. A configuration error is logged: the API
// keeps serving through it.
func runLeaderElected(ctx context.Context, le LeaderElection, controllers []leaderController) {
	if err := leaderElected(ctx, le, func(ctx context.Context) { runLeaderControllers(ctx, controllers) }); err != nil {
		klog.FromContext(ctx).Error(err, "Leader election stopped")
	}
}

func leaderElected(ctx context.Context, le LeaderElection, run func(context.Context)) error {
	logger := klog.FromContext(ctx)
	if !le.Enabled {
		run(ctx)
		return nil
	}
	id := le.Identity
	if id == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("failed to get hostname for leader election identity: %w", err)
		}
		id = host + "_" + uuid.NewString()
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: le.Namespace, Name: le.Name},
		Client:     le.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	// term serialises leadership terms: a callback of a term that ended
	// before it started must not overlap the next one.
	var term sync.Mutex
	for ctx.Err() == nil {
		elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   le.LeaseDuration,
			RenewDeadline:   le.RenewDeadline,
			RetryPeriod:     le.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            le.Name,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					term.Lock()
					defer term.Unlock()
					if ctx.Err() != nil {
						return
					}
					logger.Info("Became the leader, starting the leader's controllers", "identity", id)
					run(ctx)
				},
				OnStoppedLeading: func() { logger.Info("Stopped leading", "identity", id) },
			},
		})
		if err != nil {
			return fmt.Errorf("failed to configure leader election: %w", err)
		}
		elector.Run(ctx)
	}
	return nil
}
