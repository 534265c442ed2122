package app

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/osm-apiserver/osm-apiserver/pkg/apiserver"
	"github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/pkg/inputs"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinedeployments"
	"github.com/osm-apiserver/osm-apiserver/pkg/options"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// clusters are the REST configs of the management cluster (--kubeconfig:
// profiles, the APIService, the Lease) and of the worker cluster
// (--worker-cluster-kubeconfig: MDs, Secrets, tokens; the same cluster without
// the flag). Loaded once, shared by the API server and the syncer.
type clusters struct {
	management, worker *rest.Config
}

func (o *ServeOptions) clusters() (clusters, error) {
	management, err := restConfig(o.Kubeconfig)
	if err != nil {
		return clusters{}, fmt.Errorf("--kubeconfig: %w", err)
	}
	worker := management
	if o.WorkerClusterKubeconfig != "" {
		if worker, err = restConfig(o.WorkerClusterKubeconfig); err != nil {
			return clusters{}, fmt.Errorf("--worker-cluster-kubeconfig: %w", err)
		}
	}
	return clusters{management: management, worker: worker}, nil
}

// Config builds the server's configuration. It reads the clusters: the
// cluster-info ConfigMap and the registry credentials Secret, if named.
func (o *ServeOptions) Config(ctx context.Context, c clusters) (*apiserver.Config, error) {
	management, worker := c.management, c.worker
	generic, err := o.genericConfig()
	if err != nil {
		return nil, err
	}
	profiles, err := versioned.NewForConfig(management)
	if err != nil {
		return nil, err
	}
	mds, err := machinedeployments.NewListWatch(worker)
	if err != nil {
		return nil, err
	}
	workerClient, err := kubernetes.NewForConfig(worker)
	if err != nil {
		return nil, err
	}
	cluster, err := inputs.ClusterInfo(ctx, o.Cluster, workerClient, worker)
	if err != nil {
		return nil, err
	}
	node, err := o.nodeOptions(ctx, workerClient)
	if err != nil {
		return nil, err
	}
	return &apiserver.Config{
		GenericConfig: generic,
		ExtraConfig: apiserver.ExtraConfig{
			Profiles:           profiles,
			MachineDeployments: mds,
			Namespace:          o.Namespace,
			Cluster:            cluster,
			Node:               node,
			CacheSize:          o.RenderCacheSize,
			WatchHistory:       o.WatchHistory,
		},
	}, nil
}

// genericConfig applies each generic option explicitly, like metrics-server.
func (o *ServeOptions) genericConfig() (*genericapiserver.RecommendedConfig, error) {
	dns, ips := o.servingCertNames()
	if err := o.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", dns, ips); err != nil {
		return nil, fmt.Errorf("failed to create self-signed certificates: %w", err)
	}
	// Out of the cluster, authenticate and authorize through the management
	// cluster of --kubeconfig.
	if o.Authentication.RemoteKubeConfigFile == "" {
		o.Authentication.RemoteKubeConfigFile = o.Kubeconfig
	}
	if o.Authorization.RemoteKubeConfigFile == "" {
		o.Authorization.RemoteKubeConfigFile = o.Kubeconfig
	}
	cfg := genericapiserver.NewRecommendedConfig(registry.Codecs)
	cfg.EffectiveVersion = compatibility.DefaultBuildEffectiveVersion()
	if err := o.SecureServing.ApplyTo(&cfg.SecureServing, &cfg.LoopbackClientConfig); err != nil {
		return nil, err
	}
	if err := o.Authentication.ApplyTo(&cfg.Authentication, cfg.SecureServing, nil); err != nil {
		return nil, err
	}
	if err := o.Authorization.ApplyTo(&cfg.Authorization); err != nil {
		return nil, err
	}
	if err := o.Features.ApplyTo(&cfg.Config, nil, nil); err != nil {
		return nil, err
	}
	apiserver.SetOpenAPI(&cfg.Config)
	return cfg, nil
}

// nodeOptions parses the node flags and reads the registry credentials Secret
// they name from the worker cluster.
func (o *ServeOptions) nodeOptions(ctx context.Context, client kubernetes.Interface) (render.NodeOptions, error) {
	node, err := o.Node.NodeOptions()
	if err != nil || o.Node.RegistryCredentialsSecret == "" || o.Node.RegistryCredentialsFromFile {
		return node, err
	}
	namespace, name, err := o.Node.RegistryCredentialsSecretRef()
	if err != nil {
		return node, err
	}
	secret, err := client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return node, fmt.Errorf("--node-registry-credentials-secret: %w", err)
	}
	if node.RegistryCredentials, err = options.RegistryCredentialsFromSecret(secret); err != nil {
		return node, fmt.Errorf("--node-registry-credentials-secret %s/%s: %w", namespace, name, err)
	}
	return node, nil
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return rest.InClusterConfig()
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, &clientcmd.ConfigOverrides{})
	return loader.ClientConfig()
}
