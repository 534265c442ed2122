package nodejoin

import (
	"context"
	"fmt"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
)

// ControllerConfig is what the leader's Controller needs. The Machine and
// Node informers are shared with the API and started by the caller.
type ControllerConfig struct {
	// Client deletes join identities and credentials in Namespace, and
	// approves and denies CSRs.
	Client kubernetes.Interface
	// Machines reads Machines and whether they joined; MachineInformer and
	// NodeInformer are the informers behind it.
	Machines                      *machines.MachineReader
	MachineInformer, NodeInformer cache.SharedIndexInformer
	// TTL is how long a credential lives after its machine's first answer.
	TTL time.Duration
	// Workers per queue; 2 if zero.
	Workers int
}

// Controller runs on the leader: it approves or denies the kubelet client
// CSRs of join identities (approver.go), and deletes a machine's credential
// once its Node registered or it expired, and its identity once the Machine
// is gone (cleanup.go). Build one per leadership term and Run it.
type Controller struct {
	cfg ControllerConfig
	// watch are this term's informers of join identities, credentials and CSRs.
	watch *informers.Join
	// machineQueue holds the keys of Machines whose credential needs a look,
	// csrQueue the names of CSRs of join identities to decide.
	machineQueue workqueue.TypedRateLimitingInterface[MachineKey]
	csrQueue     workqueue.TypedRateLimitingInterface[string]
	// settle is how long after an answer its leftovers are left alone.
	settle time.Duration
}

// NewController returns the leader's Controller.
func NewController(cfg ControllerConfig) *Controller {
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	c := &Controller{
		cfg:    cfg,
		settle: settleTime,
		watch:  informers.NewJoin(cfg.Client, Namespace, Selector().String()),
		machineQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[MachineKey](),
			workqueue.TypedRateLimitingQueueConfig[MachineKey]{Name: "osm_machine_join_credentials"}),
		csrQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "osm_machine_join_csrs"}),
	}
	return c
}

// Run decides CSRs and cleans up credentials until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer c.machineQueue.ShutDown()
	defer c.csrQueue.ShutDown()
	logger := klog.FromContext(ctx).WithName("machine-join")
	ctx = klog.NewContext(ctx, logger)
	registrations, err := c.addHandlers()
	defer func() {
		for _, r := range registrations {
			// Removing a handler only fails for a foreign registration.
			_ = r.informer.RemoveEventHandler(r.registration)
		}
	}()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.watch.Start(ctx)
	defer c.watch.Shutdown()
	synced := []cache.InformerSynced{c.watch.Accounts.HasSynced, c.watch.Credentials.HasSynced, c.watch.CSRs.HasSynced}
	for _, r := range registrations {
		synced = append(synced, r.registration.HasSynced)
	}
	if !cache.WaitForNamedCacheSync("osm-machine-join", ctx.Done(), synced...) {
		return fmt.Errorf("machine join: informers did not sync: %w", ctx.Err())
	}
	logger.Info("Starting the CSR approver and credential cleanup of machine joins")
	for range c.cfg.Workers {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for processNext(ctx, c.machineQueue, c.syncMachine) {
			}
		}, time.Second)
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for processNext(ctx, c.csrQueue, c.syncCSR) {
			}
		}, time.Second)
	}
	<-ctx.Done()
	return nil
}

// processNext handles one key of q with sync, which may ask for another look
// after retryAfter.
func processNext[K comparable](ctx context.Context, q workqueue.TypedRateLimitingInterface[K], sync func(context.Context, K) (time.Duration, error)) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	retryAfter, err := sync(ctx, key)
	switch {
	case err != nil && ctx.Err() != nil:
		// Stopping: the next leader looks again.
	case err != nil:
		klog.FromContext(ctx).Error(err, "Failed to sync", "key", key)
		q.AddRateLimited(key)
	default:
		q.Forget(key)
		if retryAfter > 0 {
			q.AddAfter(key, retryAfter)
		}
	}
	return true
}
