// Package server builds osm-apiserver in one place: Config → Complete → New
// makes every informer, the cluster facts, the resolver and its render cache,
// the change feed, the REST storages of osm.k8c.io and the leader-elected
// syncer, and starts them in one post-start hook. cmd/osm-apiserver turns flags
// into a Config; the end-to-end tests use the same constructor.
package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed"
	"github.com/osm-apiserver/osm-apiserver/pkg/defaultosps"
	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	"github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	osplisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/bootreport"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/machinejoin"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/operatingsystemconfig"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/profilereview"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/provisioningpayload"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
	"github.com/osm-apiserver/osm-apiserver/pkg/syncer"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// Config is the whole configuration of osm-apiserver.
type Config struct {
	// Generic is the generic API server's configuration (serving,
	// authentication, authorization, OpenAPI: see SetOpenAPI).
	Generic *genericapiserver.RecommendedConfig
	// Clusters are the clients of the management and worker clusters.
	Clusters Clusters
	// Facts say where the cluster facts and node options come from; Client
	// and Fallback default to the worker cluster's.
	Facts facts.Config
	// Syncer configures the syncer.
	Syncer syncer.Options
	// LeaderElection elects the replica that runs the leader's controllers;
	// Complete fills in the Client and, if empty, the Namespace.
	LeaderElection LeaderElection
	// InstallDefaultOSPs has the leader install the profiles embedded in the
	// binary.
	InstallDefaultOSPs bool
	// MachineJoin configures the exchange of MachineJoins and the leader's
	// CSR approver and credential cleanup.
	MachineJoin nodejoin.Options
	// ProfileNamespace holds the profiles of MDs that name no namespace, the
	// default profiles and the syncer's Lease (--namespace).
	ProfileNamespace string
	// RenderCacheBytes bounds the rendered configs and payloads the render
	// cache keeps; <= 0 means resolve.DefaultCacheBytes.
	RenderCacheBytes int64
	// ConcurrentRenders bounds the renders running at once (0: the default).
	ConcurrentRenders int
	// WatchHistory is how many changes a watch can resume from.
	WatchHistory int
	// Render renders one input; nil means the real renderer. Tests set it.
	Render func(render.Input) (*render.Result, error)
}

// Clusters are the clients of the management cluster (profiles, the
// APIService, the syncer's Lease) and of the worker cluster (MDs, Secrets,
// tokens, RBAC, Events) — the same cluster unless --worker-cluster-kubeconfig.
type Clusters struct {
	// Profiles reads OperatingSystemProfiles (management cluster).
	Profiles versioned.Interface
	// Management holds the syncer's Lease.
	Management kubernetes.Interface
	// Worker is written by the syncer: give it a QPS for ~10 writes per MD.
	Worker kubernetes.Interface
	// WorkerConfig is the worker's client configuration, whose API server
	// and CA nodes use when the cluster publishes no kube-public/cluster-info.
	WorkerConfig *rest.Config
	// MachineDeployments lists and watches the worker's MachineDeployments.
	MachineDeployments cache.ListerWatcher
	// MachineSets lists and watches the worker's MachineSets, which hold the
	// template of each MD revision.
	MachineSets cache.ListerWatcher
	// Machines and Nodes list and watch the worker's Machines and the
	// metadata of its Nodes: whom a MachineJoin is for, and who joined.
	Machines, Nodes cache.ListerWatcher
	// Separate says the worker cluster is not the management cluster.
	Separate bool
	// Metadata reads the metadata of the boot reports' Secrets.
	Metadata metadata.Interface
	// Reports writes the boot reports' Secrets nodes post; nil is Worker. A
	// client of its own: a flood of reports must not take the syncer's rate.
	Reports kubernetes.Interface
}

// workerQPS lets the syncer write ~7 objects per new MachineDeployment:
// client-go's default 5 QPS would take half an hour for 1,000.
const workerQPS, workerBurst = 200, 400

// reportsQPS bounds the writes of boot reports (two requests per step
// record) of one replica, beside the per-MD and per-machine limits.
const reportsQPS, reportsBurst = 100, 200

// NewClusters returns the clients of the management and worker clusters.
func NewClusters(management, worker *rest.Config) (Clusters, error) {
	w := rest.CopyConfig(worker)
	w.QPS, w.Burst = workerQPS, workerBurst
	r := rest.CopyConfig(worker)
	r.QPS, r.Burst = reportsQPS, reportsBurst
	var c Clusters
	var errs [8]error
	c.Profiles, errs[0] = versioned.NewForConfig(management)
	c.Management, errs[1] = kubernetes.NewForConfig(management)
	c.Worker, errs[2] = kubernetes.NewForConfig(w)
	c.MachineDeployments, errs[3] = machines.NewMachineDeploymentListWatch(worker)
	c.MachineSets, errs[4] = machines.NewMachineSetListWatch(worker)
	c.Machines, errs[5] = machines.NewMachineListWatch(worker)
	c.Metadata, errs[6] = metadata.NewForConfig(worker)
	if errs[6] == nil {
		c.Nodes = machines.NewNodeListWatch(c.Metadata)
	}
	c.Reports, errs[7] = kubernetes.NewForConfig(r)
	c.WorkerConfig = worker
	c.Separate = worker != management
	return c, errors.Join(errs[:]...)
}

// maxRequestBodyBytes bounds a request's body (see Complete).
const maxRequestBodyBytes = 64 << 10

// CompletedConfig is a Config with defaults filled in, ready for New.
type CompletedConfig struct {
	*completedConfig
}

type completedConfig struct {
	generic genericapiserver.CompletedConfig
	cfg     Config
}

// Complete fills in defaults. It builds nothing.
func (c *Config) Complete() CompletedConfig {
	cfg := *c
	if cfg.ProfileNamespace == "" {
		cfg.ProfileNamespace = "kube-system"
	}
	if cfg.Facts.Client == nil {
		cfg.Facts.Client = cfg.Clusters.Worker
	}
	if cfg.Clusters.Reports == nil {
		cfg.Clusters.Reports = cfg.Clusters.Worker
	}
	// Every resource is read-only but the step records of boot reports,
	// each at most 8 KiB: bigger bodies are refused (413) before they are
	// read, rather than decoded up to the default 3 MB.
	c.Generic.MaxRequestBodyBytes = maxRequestBodyBytes
	if cfg.Facts.Fallback == nil {
		cfg.Facts.Fallback = cfg.Clusters.WorkerConfig
	}
	if cfg.LeaderElection.Client == nil {
		cfg.LeaderElection.Client = cfg.Clusters.Management
	}
	if cfg.LeaderElection.Namespace == "" {
		cfg.LeaderElection.Namespace = cfg.ProfileNamespace
	}
	if cfg.MachineJoin == (nodejoin.Options{}) {
		cfg.MachineJoin = nodejoin.DefaultOptions()
	}
	// Innermost, so that the hint is set on what the API handlers see.
	if chain := c.Generic.BuildHandlerChainFunc; chain != nil {
		c.Generic.BuildHandlerChainFunc = func(h http.Handler, gc *genericapiserver.Config) http.Handler {
			return chain(registry.WithTableHint(h), gc)
		}
	}
	return CompletedConfig{&completedConfig{generic: c.Generic.Complete(), cfg: cfg}}
}

// Server is osm-apiserver: the API and the syncer.
type Server struct {
	generic *genericapiserver.GenericAPIServer
}

// New builds osm-apiserver.
func (c completedConfig) New() (*Server, error) {
	cfg := c.cfg
	cl := cfg.Clusters
	if cl.Profiles == nil || cl.Management == nil || cl.Worker == nil || cl.MachineDeployments == nil || cl.MachineSets == nil ||
		cl.Machines == nil || cl.Nodes == nil || cl.Metadata == nil {
		return nil, errors.New("osm-apiserver needs clients of the management and worker clusters")
	}
	metrics.Register()
	generic, err := c.generic.New("osm-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}

	factsSource, err := facts.NewSource(cfg.Facts)
	if err != nil {
		return nil, err
	}
	// Every informer the API renders from is a stream of the feed, which
	// gives the API's resourceVersions: see pkg/changefeed.
	feed := changefeed.New(cfg.WatchHistory, func() string { return factsVersion(factsSource) })
	streams := newStreams(feed)
	mdInformer := machines.NewMachineDeploymentInformer(streams.machineDeployments.Wrap(cl.MachineDeployments), cfg.ProfileNamespace)
	mds := machines.NewLister(mdInformer.GetIndexer())
	msInformer := machines.NewMachineSetInformer(streams.machineSets.Wrap(cl.MachineSets))
	ospInformer := newProfileInformer(cl.Profiles, streams.profiles)
	overlayInformer := newOverlayInformer(cl.Profiles, streams.overlays)
	selector := newOverlaySelector(overlayInformer, cfg.ProfileNamespace)
	tokenInformer := tokens.NewInformer(cl.Worker, tokens.Wrap{Bootstrap: streams.tokens.Wrap, Fetch: streams.fetchTokens.Wrap})
	payloadInformer := syncer.NewPayloadInformer(cl.Worker, streams.payloads.Wrap)
	reportInformer := bootreports.NewInformer(cl.Metadata, streams.bootReports.Wrap)
	// Machines and Nodes are no input of a render: no streams of the feed.
	machineInformer := machines.NewMachineInformer(cl.Machines)
	nodeInformer := machines.NewNodeInformer(cl.Nodes)
	machineReader := machines.NewMachineReader(machineInformer.GetIndexer(), msInformer.GetIndexer(), nodeInformer.GetIndexer())
	resolver := resolve.New(resolve.Config{
		ProfileNamespace:  cfg.ProfileNamespace,
		Profiles:          osplisters.NewOperatingSystemProfileLister(ospInformer.GetIndexer()),
		Facts:             factsSource,
		Tokens:            tokens.NewSource(tokenInformer),
		Claims:            &machines.Claims{MachineDeployments: mds, Secrets: payloadInformer.Lister()},
		Revisions:         machines.NewRevisionTemplates(msInformer.GetIndexer()),
		Overlays:          selector,
		Render:            cfg.Render,
		CacheBytes:        cfg.RenderCacheBytes,
		ConcurrentRenders: cfg.ConcurrentRenders,
	})
	// Every input of an output publishes its change to API watchers; the
	// syncer has handlers of its own.
	refresh := make(chan struct{}, 1)
	inputs := apiInputs{
		streams: streams, mds: mds, resolver: resolver, factsSource: factsSource, refresh: refresh,
		machineDeployments: mdInformer, machineSets: msInformer, profiles: ospInformer, tokens: tokenInformer,
		payloads: payloadInformer.Informer(), overlays: overlayInformer, selector: selector,
		bootReports: reportInformer.Informer(), machines: machineInformer, nodes: nodeInformer,
	}
	if err := inputs.publishChanges(feed); err != nil {
		return nil, err
	}

	exchange := &nodejoin.Exchange{
		Callers:            tokens.NewSource(tokenInformer),
		MachineDeployments: mds,
		Machines:           machineReader,
		Resolver:           resolver,
		Facts:              factsSource,
		Issuer:             &nodejoin.Issuer{Client: cl.Worker, TTL: cfg.MachineJoin.CredentialTTL, RetryWindow: cfg.MachineJoin.RetryWindow},
		Synced:             inputs.joinSynced,
	}
	events := record.NewBroadcaster()
	info := registry.Build(registry.Storages{
		Configs:      operatingsystemconfig.NewREST(mds, resolver, feed, reportInformer),
		Payloads:     provisioningpayload.NewREST(mds, resolver, feed),
		MachineJoins: machinejoin.NewREST(exchange),
		ProfileReviews: profilereview.NewREST(profilereview.Config{
			ProfileNamespace: cfg.ProfileNamespace, MachineDeployments: mds, Resolver: resolver, Overlays: selector,
			Authorizer: c.generic.Authorization.Authorizer, Feed: feed,
		}),
		BootReports: bootreport.NewREST(cl.Worker.CoreV1().Secrets(bootreports.Namespace)),
		BootReportSteps: bootreport.NewStepREST(bootreport.StepConfig{
			Secrets:            cl.Reports.CoreV1().Secrets(bootreports.Namespace),
			Caller:             tokens.NewSource(tokenInformer).CallerMachineDeployment,
			MachineDeployments: mds,
			Machines:           machineReader,
			Recorder:           events.NewRecorder(eventScheme, corev1.EventSource{Component: "osm-apiserver"}),
		}),
	})
	if err := generic.InstallAPIGroup(&info); err != nil {
		return nil, fmt.Errorf("failed to install osm.k8c.io: %w", err)
	}
	upstream := &upstreamCheck{management: cl.Management}
	if cl.Separate {
		upstream.worker = cl.Worker
	}
	if err := generic.AddReadyzChecks(inputs.readiness(feed), upstream); err != nil {
		return nil, err
	}

	sc := syncer.Config{
		Client:             cl.Worker,
		MachineDeployments: mdInformer,
		MachineSets:        msInformer,
		Machines:           machineReader,
		MachineInformer:    machineInformer,
		Profiles:           ospInformer,
		Overlays:           overlayInformer,
		OverlayClient:      cl.Profiles.OverlaysV1alpha1(),
		OverlaySelector:    selector,
		Tokens:             tokenInformer,
		Payloads:           payloadInformer,
		BootReports:        reportInformer,
		BootReportTTL:      cfg.Syncer.BootReportTTL,
		Resolver:           resolver,
		Facts:              factsSource,
		Refresh:            refresh,
		ProfileNamespace:   cfg.ProfileNamespace,
		TokenTTL:           cfg.Syncer.TokenTTL,
		TokenRenewBefore:   cfg.Syncer.TokenRenewBefore,
		Workers:            cfg.Syncer.Workers,
		ResyncPeriod:       cfg.Syncer.ResyncPeriod,
	}
	var installer *defaultosps.Installer
	if cfg.InstallDefaultOSPs {
		if installer, err = defaultosps.NewInstaller(cl.Profiles.OperatingsystemmanagerV1alpha1(), cfg.ProfileNamespace); err != nil {
			return nil, err
		}
	}
	joinController := nodejoin.ControllerConfig{
		Client: cl.Worker, Machines: machineReader, MachineInformer: machineInformer, NodeInformer: nodeInformer, TTL: cfg.MachineJoin.CredentialTTL,
	}
	generic.AddPostStartHookOrDie("start-osm", func(hook genericapiserver.PostStartHookContext) error {
		ctx := hook.Context
		go ospInformer.RunWithContext(ctx)
		go overlayInformer.RunWithContext(ctx)
		go mdInformer.RunWithContext(ctx)
		go msInformer.RunWithContext(ctx)
		go machineInformer.RunWithContext(ctx)
		go nodeInformer.RunWithContext(ctx)
		tokenInformer.Start(ctx.Done())
		payloadInformer.Start(ctx.Done())
		reportInformer.Start(ctx.Done())
		// Warning Events of failed boot steps, from whichever replica took the record.
		events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cl.Worker.CoreV1().Events("")})
		go func() {
			<-ctx.Done()
			events.Shutdown()
		}()
		factsSource.Start(ctx)
		go upstream.run(ctx)
		leaders := []leaderController{
			{name: "syncer", run: func(ctx context.Context) error {
				c, err := syncer.New(sc)
				if err != nil {
					return err
				}
				return c.Run(ctx)
			}},
			{name: "machine-join", run: nodejoin.NewController(joinController).Run},
		}
		if installer != nil {
			leaders = append(leaders, leaderController{name: "default-profiles", run: func(ctx context.Context) error {
				installer.Run(ctx)
				return nil
			}})
		}
		go func() {
			if err := runLeaderElected(ctx, cfg.LeaderElection, func(ctx context.Context) { runLeaderControllers(ctx, leaders) }); err != nil {
				klog.ErrorS(err, "Leader election stopped")
			}
		}()
		return nil
	})
	return &Server{generic: generic}, nil
}

// Run serves until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	start := time.Now()
	klog.InfoS("Starting osm-apiserver")
	defer func() { klog.InfoS("Stopped osm-apiserver", "uptime", time.Since(start)) }()
	return s.generic.PrepareRun().RunWithContext(ctx)
}

// eventScheme of the API's Events: they are recorded against hand-built
// references to MachineDeployments, so it needs no types.
var eventScheme = runtime.NewScheme()

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}
