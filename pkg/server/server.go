// Package server builds osm-apiserver in one place: Config → Complete → New.
// New builds the inputs every replica renders from (inputs.go: the informers
// of pkg/informers, the cluster facts, the resolver and its render cache, the
// change feed), installs the REST storages of osm.k8c.io served from them
// (controllers.go), and lists the controllers only the elected leader runs
// (leader.go, leaderelection.go); one post-start hook starts them all.
// cmd/osm-apiserver turns flags into a Config; the end-to-end tests use the
// same constructor.
package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	"github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/servingcert"
	"github.com/osm-apiserver/osm-apiserver/pkg/syncer"
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
	// ConcurrentPreviews bounds the ProfileReview renders running at once,
	// in slots of their own (0: the default).
	ConcurrentPreviews int
	// WatchHistory is how many changes a watch can resume from.
	WatchHistory int
	// ServingCert, if not nil, has the server keep its own serving
	// certificate in a Secret of the management cluster (shared by the
	// replicas) and the caBundle of the APIService in the worker cluster
	// (pkg/servingcert); nil serves Generic's certificate.
	ServingCert *servingcert.Options
	// Render renders one input; nil means the real renderer. Tests set it.
	Render func(render.Input) (*render.Result, error)
}

// Clusters are the clients of the management cluster (profiles, the syncer's
// Lease, the serving certificate's Secret) and of the worker cluster (MDs,
// Secrets, tokens, RBAC, Events, the APIService) — the same cluster unless
// --worker-cluster-kubeconfig.
type Clusters struct {
	// Profiles reads OperatingSystemProfiles (management cluster).
	Profiles versioned.Interface
	// Management holds the syncer's Lease and the serving certificate's Secret.
	Management kubernetes.Interface
	// APIServices sets the caBundle of the APIService: the worker cluster's,
	// whose kube-apiserver proxies nodes and users to osm-apiserver.
	APIServices dynamic.Interface
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
	var errs [9]error
	c.Profiles, errs[0] = versioned.NewForConfig(management)
	c.Management, errs[1] = kubernetes.NewForConfig(management)
	c.Worker, errs[2] = kubernetes.NewForConfig(w)
	c.MachineDeployments, errs[3] = informers.MachineDeploymentListWatch(worker)
	c.MachineSets, errs[4] = informers.MachineSetListWatch(worker)
	c.Machines, errs[5] = informers.MachineListWatch(worker)
	c.Metadata, errs[6] = metadata.NewForConfig(worker)
	if errs[6] == nil {
		c.Nodes = informers.NodeListWatch(c.Metadata)
	}
	c.Reports, errs[7] = kubernetes.NewForConfig(r)
	c.APIServices, errs[8] = dynamic.NewForConfig(worker)
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

// Server is osm-apiserver: the API and the leader's controllers.
type Server struct {
	generic *genericapiserver.GenericAPIServer
}

// New builds osm-apiserver: the inputs every replica watches, the API group
// osm.k8c.io served from them, readiness, and the controllers the leader runs.
func (c completedConfig) New() (*Server, error) {
	cfg := c.cfg
	if err := cfg.Clusters.validate(); err != nil {
		return nil, err
	}
	metrics.Register()
	generic, err := c.generic.New("osm-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	if cfg.ServingCert != nil {
		c.generic.SecureServing.Cert = newServingCert(cfg)
	}
	in, err := newInputs(cfg)
	if err != nil {
		return nil, err
	}
	if err := in.publishChanges(); err != nil {
		return nil, err
	}
	events := record.NewBroadcaster()
	info := registry.Build(in.storages(cfg, c.generic.Authorization.Authorizer, events))
	if err := generic.InstallAPIGroup(&info); err != nil {
		return nil, fmt.Errorf("failed to install osm.k8c.io: %w", err)
	}
	upstream := newUpstreamCheck(cfg.Clusters)
	checks := []healthz.HealthChecker{in.readiness(), upstream}
	if rh := c.generic.Authentication.RequestHeaderConfig; rh != nil && rh.CAContentProvider != nil {
		checks = append(checks, frontProxyCA{ca: rh.CAContentProvider})
	}
	if err := generic.AddReadyzChecks(checks...); err != nil {
		return nil, err
	}
	leaders, err := in.leaderControllers(cfg)
	if err != nil {
		return nil, err
	}
	generic.AddPostStartHookOrDie("start-osm", func(hook genericapiserver.PostStartHookContext) error {
		ctx := hook.Context
		in.informers.Start(ctx)
		in.facts.Start(ctx)
		recordEvents(ctx, events, cfg.Clusters.Worker)
		go upstream.run(ctx)
		go runLeaderElected(ctx, cfg.LeaderElection, leaders)
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

// validate says whether every client New needs is there.
func (cl Clusters) validate() error {
	if cl.Profiles == nil || cl.Management == nil || cl.Worker == nil || cl.MachineDeployments == nil || cl.MachineSets == nil ||
		cl.Machines == nil || cl.Nodes == nil || cl.Metadata == nil {
		return errors.New("osm-apiserver needs clients of the management and worker clusters")
	}
	return nil
}

// newServingCert returns the provider of the certificate the server keeps in
// its Secret; the generic server runs it (RunOnce before serving, then Run).
func newServingCert(cfg Config) *servingcert.Controller {
	o := *cfg.ServingCert
	informer := informers.NewSecret(cfg.Clusters.Management, o.Namespace, servingcert.SecretName)
	var apiService *servingcert.APIService
	if cfg.Clusters.APIServices != nil {
		apiService = servingcert.NewAPIService(cfg.Clusters.APIServices, servingcert.APIServiceName)
	}
	return servingcert.New(cfg.Clusters.Management, informer, apiService, o)
}
