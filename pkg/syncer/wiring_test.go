package syncer_test

import (
	"k8s.io/apimachinery/pkg/watch"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/osm-apiserver/osm-apiserver/pkg/apiserver"
	"github.com/osm-apiserver/osm-apiserver/pkg/defaultosps"
	"github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/pkg/syncer"
)

// wireSyncer is how `serve` starts the syncer; it is compiled with the tests so
// that it stays true. Before New: the Secret informers and the credential
// source (every replica serves per-MD tokens). After New: a post-start hook
// that starts the informers and runs the leader-elected syncer.
//
// management/worker are the rest configs of --kubeconfig and
// --worker-cluster-kubeconfig (the same without the latter); opts are the
// syncer's flags (opts.AddFlags on a "syncer" flag set).
func wireSyncer(cfg *apiserver.Config, newServer func(*apiserver.Config) (*apiserver.Server, error),
	management, worker *rest.Config, opts *syncer.Options, namespace string, disableDefaultOSPs bool,
) (*apiserver.Server, error) {
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
	profilesClient, err := versioned.NewForConfig(management)
	if err != nil {
		return nil, err
	}
	secrets := syncer.NewSecretInformers(workerClient, 0)
	cfg.ExtraConfig.Credentials = syncer.NewCredentialSource(secrets)
	cluster := cfg.ExtraConfig.Cluster

	server, err := newServer(cfg) // cfg.Complete().New()
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
		if installer, err = defaultosps.NewInstaller(profilesClient.OperatingsystemmanagerV1alpha1(), namespace); err != nil {
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
			Cluster:            syncer.StaticCluster(cluster),
			ProfileNamespace:   namespace,
		}
		opts.ApplyTo(&sc)
		go func() {
			// Run returns only when ctx ends; errors are configuration errors.
			_ = syncer.Run(ctx, opts.LeaderElectionFor(managementClient, namespace), installer, sc)
		}()
		return nil
	})
	return server, nil
}
