package syncer

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// Controller syncs MachineDeployments into Secrets. Build one per leadership
// term with New and Run it; Run removes its event handlers when it returns.
type Controller struct {
	cfg      Config
	queue    workqueue.TypedRateLimitingInterface[string]
	mds      machines.Lister
	payloads corev1listers.SecretLister
	tokens   *tokens.Manager
	source   *tokens.Source // what renders read: the tokens the informer holds
	fetch    *tokens.FetchIssuer
	rbac     *tokens.AccessWriter
	claims   *machines.Claims
	// revisions finds the template of an MD's revision; nil without MachineSets.
	revisions *machines.RevisionTemplates
	owned     *owned
	recorder  record.EventRecorder

	// reportQueue holds the names of boot reports' Secrets to look at.
	reportQueue workqueue.TypedRateLimitingInterface[string]
	// namespaceQueue holds namespaceKey while cloud-init-settings needs a look.
	// overlayQueue holds the overlays whose status needs computing.
	overlayQueue workqueue.TypedRateLimitingInterface[string]
	// namespaceQueue holds the managed namespaces that need a look.
	namespaceQueue workqueue.TypedRateLimitingInterface[string]
	// namespaceReady is set while cloud-init-settings exists and is not being
	// deleted; MachineDeployments are synced only then.
	namespaceReady atomic.Bool
	// selfSubject is who the syncer is, once selfKnown (see self).
	selfSubject *rbacv1.Subject
	selfKnown   bool
	// legacyFetchRemoved says removeLegacyFetch found cloud-init-settings
	// free of earlier versions' fetch credentials (namespace worker only).
	legacyFetchRemoved bool
	stopEvents         func()
	// compatibility holds, per MD in the compatibility mode, the profile
	// revision its Warning was recorded for in this term.
	compatibility sync.Map
}

// New returns a Controller for cfg.
func New(cfg Config) (*Controller, error) {
	cfg.complete()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	own := newOwned(cfg.Client)
	c := &Controller{
		cfg: cfg,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](500*time.Millisecond, 5*time.Minute),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "osm_syncer"}),
		mds:      machines.NewLister(cfg.MachineDeployments.GetIndexer()),
		payloads: cfg.Payloads.Lister(),
		source:   tokens.NewSource(cfg.Tokens),
		tokens: &tokens.Manager{
			Client:      cfg.Client,
			Cache:       cfg.Tokens.Index(),
			TTL:         cfg.TokenTTL,
			RenewBefore: cfg.TokenRenewBefore,
		},
		fetch: &tokens.FetchIssuer{
			Client:          cfg.Client,
			Secrets:         cfg.Tokens.FetchLister(),
			ServiceAccounts: own.serviceAccountLister(),
			TTL:             cfg.TokenTTL,
			RenewBefore:     cfg.TokenRenewBefore,
		},
		rbac:  &tokens.AccessWriter{Client: cfg.Client, Namespace: machinecontroller.CloudInitSettingsNamespace},
		owned: own,
		namespaceQueue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](500*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "osm_syncer_namespace"}),
		reportQueue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](500*time.Millisecond, time.Minute),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "osm_syncer_boot_reports"}),
		overlayQueue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](500*time.Millisecond, time.Minute),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "osm_syncer_overlays"}),
		recorder: cfg.Recorder,
	}
	c.claims = &machines.Claims{MachineDeployments: c.mds, Secrets: c.payloads}
	if cfg.MachineSets != nil {
		c.revisions = machines.NewRevisionTemplates(cfg.MachineSets.GetIndexer())
	}
	if c.recorder == nil {
		broadcaster := record.NewBroadcaster()
		broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cfg.Client.CoreV1().Events("")})
		c.recorder = broadcaster.NewRecorder(eventScheme, corev1.EventSource{Component: "osm-apiserver"})
		c.stopEvents = broadcaster.Shutdown
	}
	return c, nil
}

// Run syncs until ctx is done.
func (c *Controller) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	defer c.namespaceQueue.ShutDown()
	defer c.reportQueue.ShutDown()
	defer c.overlayQueue.ShutDown()
	if c.stopEvents != nil {
		defer c.stopEvents()
	}
	logger := klog.FromContext(ctx).WithName("syncer")
	ctx = klog.NewContext(ctx, logger)
	defer c.owned.Shutdown()
	ctx, cancel := context.WithCancel(ctx) // stops the owned informers before shutdown waits for them
	defer cancel()

	registrations, err := c.addHandlers()
	defer c.removeHandlers(registrations)
	if err != nil {
		return err
	}
	c.owned.Start(ctx)
	// The namespace and the syncer's access to it first: the informers of its
	// contents wait for them.
	for _, m := range managedNamespaces {
		c.namespaceQueue.Add(m.name)
	}
	go c.runNamespace(ctx)
	synced := []cache.InformerSynced{c.cfg.Tokens.HasSynced, c.cfg.Payloads.HasSynced}
	if c.reportsEnabled() {
		synced = append(synced, c.cfg.BootReports.HasSynced)
	}
	for _, r := range registrations {
		synced = append(synced, r.registration.HasSynced)
	}
	if !cache.WaitForNamedCacheSync("osm-syncer", ctx.Done(), synced...) {
		return fmt.Errorf("syncer: informers did not sync: %w", ctx.Err())
	}
	logger.Info("Starting syncer", "workers", c.cfg.Workers)
	for range c.cfg.Workers {
		go wait.UntilWithContext(ctx, c.runWorker, time.Second)
	}
	go wait.UntilWithContext(ctx, c.resync, c.cfg.ResyncPeriod)
	if c.reportsEnabled() {
		go c.runReports(ctx)
	}
	go c.runOverlayWorker(ctx)
	go c.refreshOn(ctx, c.cfg.Refresh)
	go wait.UntilWithContext(ctx, func(context.Context) { metrics.SyncerQueueDepth.Set(float64(c.queue.Len())) }, time.Second)
	<-ctx.Done()
	logger.Info("Stopping syncer")
	return nil
}

func (c *Controller) runWorker(ctx context.Context) {
	for c.processNext(ctx) {
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	start := time.Now()
	retryAfter, err := c.sync(ctx, key)
	metrics.ObserveSync(start, err)
	switch {
	case err != nil && ctx.Err() != nil:
		// Stopping (leadership lost or shutdown): the next leader syncs it.
	case err != nil:
		klog.FromContext(ctx).Error(err, "Failed to sync MachineDeployment", "machineDeployment", key)
		c.queue.AddRateLimited(key)
		if apierrors.IsForbidden(err) {
			// Perhaps the syncer's own RoleBinding in cloud-init-settings,
			// or in the fetch tokens' namespace, went.
			c.namespaceQueue.Add(machinecontroller.CloudInitSettingsNamespace)
			c.namespaceQueue.Add(tokens.FetchNamespace)
		}
	default:
		c.queue.Forget(key)
		if retryAfter > 0 {
			c.queue.AddAfter(key, retryAfter)
		}
	}
	return true
}

// enqueue adds a MachineDeployment key.
func (c *Controller) enqueue(ref machinecontroller.Ref) {
	c.queue.Add(ref.String())
}

// enqueueAll adds every known MachineDeployment.
func (c *Controller) enqueueAll() {
	for _, key := range c.cfg.MachineDeployments.GetIndexer().ListKeys() {
		c.queue.Add(key)
	}
}

// refreshOn enqueues every MachineDeployment each time ch fires, until ctx ends.
func (c *Controller) refreshOn(ctx context.Context, ch <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ch:
			c.enqueueAll()
		}
	}
}

// resync syncs every MachineDeployment again and sweeps objects of
// MachineDeployments that are gone, catching deletes missed while we were not
// the leader or not running.
func (c *Controller) resync(ctx context.Context) {
	c.rbac.Forget()
	c.enqueueAll()
	c.enqueueAllOverlays(0)
	orphans, err := c.orphans()
	if err != nil {
		klog.FromContext(ctx).Error(err, "Failed to look for objects of deleted MachineDeployments")
	}
	for ref := range orphans {
		c.enqueue(ref)
	}
}
