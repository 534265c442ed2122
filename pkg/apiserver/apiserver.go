// Package apiserver wires the osm.k8c.io aggregated API server: Config →
// Complete → New, informers started in a post-start hook, readiness tied to
// their sync.
package apiserver

import (
	"errors"
	"fmt"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	ospinformers "github.com/osm-apiserver/osm-apiserver/pkg/generated/informers/externalversions"
	"github.com/osm-apiserver/osm-apiserver/pkg/inputs"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinedeployments"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/changefeed"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/operatingsystemconfig"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/provisioningpayload"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/rendercache"
)

// ExtraConfig is what osm-apiserver adds to the generic server's configuration.
type ExtraConfig struct {
	// Profiles is a client of the cluster holding OperatingSystemProfiles (the
	// management cluster).
	Profiles versioned.Interface
	// MachineDeployments lists and watches the MDs of the worker cluster.
	MachineDeployments cache.ListerWatcher
	// Namespace holds the profiles of MDs that don't name a namespace.
	Namespace string
	// Cluster is the cluster nodes join.
	Cluster render.ClusterInfo
	// Node are the node options.
	Node render.NodeOptions
	// Credentials supplies each MD's tokens; nil gives every MD Cluster's tokens.
	Credentials inputs.CredentialSource
	// Renderer renders; nil means render.NewRenderer().
	Renderer inputs.Renderer
	// CacheSize bounds the render cache, in entries.
	CacheSize int
	// WatchHistory is how many changes a watch can resume from.
	WatchHistory int
}

// Config is the whole configuration of osm-apiserver.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	ExtraConfig   ExtraConfig
}

type completedConfig struct {
	GenericConfig genericapiserver.CompletedConfig
	ExtraConfig   *ExtraConfig
}

// CompletedConfig is a Config with defaults filled in, ready for New.
type CompletedConfig struct {
	*completedConfig
}

// Complete fills in defaults. It builds nothing.
func (cfg *Config) Complete() CompletedConfig {
	if cfg.ExtraConfig.Credentials == nil {
		cfg.ExtraConfig.Credentials = inputs.NewStaticCredentials(cfg.ExtraConfig.Cluster.BootstrapToken, cfg.ExtraConfig.Cluster.CloudInitGetterToken)
	}
	if cfg.ExtraConfig.Renderer == nil {
		cfg.ExtraConfig.Renderer = render.NewRenderer()
	}
	if cfg.ExtraConfig.Namespace == "" {
		cfg.ExtraConfig.Namespace = "kube-system"
	}
	return CompletedConfig{&completedConfig{
		GenericConfig: cfg.GenericConfig.Complete(),
		ExtraConfig:   &cfg.ExtraConfig,
	}}
}

// Server is a running osm-apiserver. Its informers, feed and resolver are
// exported for the syncer, which runs in the same process.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer

	// MachineDeployments is the informer of the worker cluster's MDs.
	MachineDeployments cache.SharedIndexInformer
	// Profiles is the informer factory of OperatingSystemProfiles.
	Profiles ospinformers.SharedInformerFactory
	// Lister reads MachineDeployments from their informer.
	Lister machinedeployments.Lister
	// Feed numbers changes; publish to it when an input changes (e.g. a token).
	Feed *changefeed.Feed
	// Resolver renders MDs through the render cache.
	Resolver *inputs.Resolver
}

// New returns an osm-apiserver with the osm.k8c.io group installed.
func (c completedConfig) New() (*Server, error) {
	extra := c.ExtraConfig
	if extra.Profiles == nil || extra.MachineDeployments == nil {
		return nil, errors.New("osm-apiserver needs a profiles client and a machinedeployments lister-watcher")
	}
	metrics.Register()
	generic, err := c.GenericConfig.New("osm-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	s := &Server{
		GenericAPIServer:   generic,
		MachineDeployments: machinedeployments.NewInformerFor(extra.MachineDeployments, 0),
		Profiles:           ospinformers.NewSharedInformerFactory(extra.Profiles, 0),
		Feed:               changefeed.New(extra.WatchHistory),
	}
	s.Lister = machinedeployments.NewLister(s.MachineDeployments.GetIndexer())
	ospInformer := s.Profiles.Operatingsystemmanager().V1alpha1().OperatingSystemProfiles()
	s.Resolver, err = inputs.New(inputs.Config{
		Namespace:   extra.Namespace,
		Profiles:    ospInformer.Lister(),
		Cluster:     extra.Cluster,
		Node:        extra.Node,
		Credentials: extra.Credentials,
		Renderer:    extra.Renderer,
		Cache:       rendercache.New(extra.CacheSize),
	})
	if err != nil {
		return nil, err
	}
	if err := leanCache(s.MachineDeployments, ospInformer.Informer()); err != nil {
		return nil, err
	}
	if err := s.addEventHandlers(ospInformer.Informer(), extra.Namespace); err != nil {
		return nil, err
	}

	info := registry.Build(
		operatingsystemconfig.NewREST(s.Lister, s.Resolver, s.Feed),
		provisioningpayload.NewREST(s.Lister, s.Resolver, s.Feed),
	)
	if err := generic.InstallAPIGroup(&info); err != nil {
		return nil, fmt.Errorf("failed to install osm.k8c.io: %w", err)
	}

	synced := []cache.InformerSynced{s.MachineDeployments.HasSynced, ospInformer.Informer().HasSynced}
	if err := generic.AddReadyzChecks(newInformerSyncCheck(synced...)); err != nil {
		return nil, err
	}
	generic.AddPostStartHookOrDie("start-osm-informers", func(ctx genericapiserver.PostStartHookContext) error {
		s.Profiles.Start(ctx.Done())
		go s.MachineDeployments.RunWithContext(ctx)
		return nil
	})
	return s, nil
}

func (s *Server) addEventHandlers(profiles cache.SharedIndexInformer, namespace string) error {
	if _, err := s.MachineDeployments.AddEventHandler(s.Feed.MachineDeploymentHandler()); err != nil {
		return err
	}
	if _, err := s.MachineDeployments.AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if md, ok := obj.(*clusterv1alpha1.MachineDeployment); ok {
				s.Resolver.Forget(md.UID)
			}
		},
	}); err != nil {
		return err
	}
	_, err := profiles.AddEventHandler(s.Feed.ProfileHandler(s.Lister, namespace))
	return err
}

// Run serves until stopCh closes.
func (s *Server) Run(stopCh <-chan struct{}) error {
	start := time.Now()
	klog.InfoS("Starting osm-apiserver")
	defer func() { klog.InfoS("Stopped osm-apiserver", "uptime", time.Since(start)) }()
	return s.GenericAPIServer.PrepareRun().Run(stopCh)
}
