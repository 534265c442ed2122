package app

import (
	"k8s.io/apimachinery/pkg/watch"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/apiserver"
	"github.com/osm-apiserver/osm-apiserver/pkg/defaultosps"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/syncer"
)

// wireSyncer builds the server from cfg and starts the syncer beside it:
// before New, the Secret informers and the per-MD credential source (every
// replica serves the tokens the leader keeps); after New, a post-start hook
// that starts those informers and runs the leader-elected syncer. MDs,
// Secrets, tokens, RBAC and Events go to the worker cluster; profiles and the
// Lease stay in the management cluster.
func (o *ServeOptions) wireSyncer(cfg *apiserver.Config, c clusters) (*apiserver.Server, error) {
	opts, namespace, disableDefaultOSPs := o.Syncer, o.Namespace, o.DisableDefaultOSPs
	management, worker := c.management, c.worker
	// ~7 writes per new MachineDeployment: client-go's default 5 QPS would
	// take half an hour for 1,000.
	workerCfg := rest.CopyConfig(worker)
	workerCfg.QPS, workerCfg.Burst = 200, 400
	workerClient, err := kubernetes.NewForConfig(workerCfg)
	if err != nil {
		return nil, err
	}
	managementClient, err := kubernetes.NewForConfig(management)
	if err != nil {
		return nil, err
	}
	secrets := syncer.NewSecretInformers(workerClient, 0)
	cfg.ExtraConfig.Credentials = syncer.NewCredentialSource(secrets)
	server, err := cfg.Complete().New()
	if err != nil {
		return nil, err
	}
	refresh, err := o.watchFacts(server, workerClient, worker)
	if err != nil {
		return nil, err
	}
	// Watchers of payloads see tokens appear or change.
	if err := secrets.OnTokenChange(func(namespace, name string) {
		if md, err := server.Lister.Get(namespace, name); err == nil {
			server.Feed.Publish(watch.Modified, md)
		}
	}); err != nil {
		return nil, err
	}
	var installer *defaultosps.Installer
	if !disableDefaultOSPs {
		if installer, err = defaultosps.NewInstaller(cfg.ExtraConfig.Profiles.OperatingsystemmanagerV1alpha1(), namespace); err != nil {
			return nil, err
		}
	}
	server.GenericAPIServer.AddPostStartHookOrDie("start-osm-syncer", func(ctx genericapiserver.PostStartHookContext) error {
		secrets.Start(ctx.Done())
		sc := syncer.Config{
			Client:             workerClient,
			MachineDeployments: server.MachineDeployments,
			Profiles:           server.Profiles.Operatingsystemmanager().V1alpha1().OperatingSystemProfiles().Informer(),
			Secrets:            secrets,
			Renderer:           server.Resolver,
			Cluster:            syncer.ClusterFunc(func() render.ClusterInfo { return server.Resolver.Facts().Cluster }),
			Refresh:            refresh,
			ProfileNamespace:   namespace,
		}
		opts.ApplyTo(&sc)
		go func() {
			// Run returns when ctx ends; an error is a configuration error the
			// API can keep serving through, so it is logged rather than fatal.
			if err := syncer.Run(ctx, opts.LeaderElectionFor(managementClient, namespace), installer, sc); err != nil {
				klog.ErrorS(err, "syncer stopped")
			}
		}()
		return nil
	})
	return server, nil
}
