package options

import (
	"fmt"
	"net"
	"net/url"
	"os"

	"k8s.io/apimachinery/pkg/api/resource"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/server"
	"github.com/osm-apiserver/osm-apiserver/pkg/servingcert"
)

// ServerConfig turns the flags into the server's configuration. It reads files
// (kubeconfigs, certificates, CA bundles) but no cluster: the server reads the
// cluster facts it watches itself.
func (o *Options) ServerConfig() (*server.Config, error) {
	generic, err := o.genericConfig()
	if err != nil {
		return nil, err
	}
	management, err := RESTConfig(o.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	worker := management
	if o.WorkerClusterKubeconfig != "" {
		if worker, err = RESTConfig(o.WorkerClusterKubeconfig); err != nil {
			return nil, fmt.Errorf("--worker-cluster-kubeconfig: %w", err)
		}
	}
	clusters, err := server.NewClusters(management, worker)
	if err != nil {
		return nil, err
	}
	cluster, err := o.Cluster.ClusterInfo()
	if err != nil {
		return nil, err
	}
	node, err := o.Node.NodeOptions()
	if err != nil {
		return nil, err
	}
	registrySecret, err := o.Node.RegistryCredentialsSecretRef()
	if err != nil {
		return nil, err
	}
	cfg := &server.Config{
		Generic:  generic,
		Clusters: clusters,
		Facts: facts.Config{Cluster: cluster, Node: node, RegistrySecret: registrySecret, NodeAPIServer: o.Cluster.NodeAPIServer,
			FallbackInCluster: inCluster(o.Kubeconfig, o.WorkerClusterKubeconfig, worker.Host, os.Getenv("KUBERNETES_SERVICE_HOST"))},
		ProfileNamespace:   o.Namespace,
		RenderCacheBytes:   renderCacheBytes(o.RenderCacheMemory),
		ConcurrentRenders:  o.ConcurrentRenders,
		ConcurrentPreviews: o.ConcurrentPreviews,
		WatchHistory:       o.WatchHistory,
	}
	if o.servingCertMode() == ServingCertSelfManaged {
		dns, _ := o.servingCertNames()
		cfg.ServingCert = &servingcert.Options{Namespace: o.ServiceNamespace, Names: dns, Validity: o.ServingCert.Validity}
	}
	o.Syncer.ApplyTo(cfg)
	o.MachineJoin.ApplyTo(&cfg.MachineJoin)
	return cfg, nil
}

// inCluster says whether the worker cluster's server is the kubernetes
// Service of the pod's own cluster, which nodes cannot reach before they
// joined: no kubeconfig (the in-cluster configuration), or a kubeconfig
// that names the Service's ClusterIP (serviceHost, from the pod's
// environment).
func inCluster(kubeconfig, workerKubeconfig, server, serviceHost string) bool {
	if kubeconfig == "" && workerKubeconfig == "" {
		return true
	}
	u, err := url.Parse(server)
	return err == nil && serviceHost != "" && u.Hostname() == serviceHost
}

// genericConfig applies each generic option explicitly, like metrics-server.
func (o *Options) genericConfig() (*genericapiserver.RecommendedConfig, error) {
	if o.servingCertMode() == ServingCertSelfSigned {
		dns, ips := o.servingCertNames()
		if err := o.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", append(dns, "localhost"), ips); err != nil {
			return nil, fmt.Errorf("failed to create self-signed certificates: %w", err)
		}
	}
	o.defaultDelegation()
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
	server.SetOpenAPI(&cfg.Config)
	return cfg, nil
}

// defaultDelegation points delegated authentication and authorization, unless
// their flags say otherwise, at the cluster whose kube-apiserver proxies to
// osm-apiserver: the worker cluster of --worker-cluster-kubeconfig, where
// nodes and users authenticate and the APIService is registered, else the
// cluster of --kubeconfig (empty: in-cluster).
func (o *Options) defaultDelegation() {
	kubeconfig := o.Kubeconfig
	if o.WorkerClusterKubeconfig != "" {
		kubeconfig = o.WorkerClusterKubeconfig
	}
	if o.Authentication.RemoteKubeConfigFile == "" {
		o.Authentication.RemoteKubeConfigFile = kubeconfig
	}
	if o.Authorization.RemoteKubeConfigFile == "" {
		o.Authorization.RemoteKubeConfigFile = kubeconfig
	}
}

// servingCertNames are the names of a self-managed or self-signed serving
// certificate: the Service's.
func (o *Options) servingCertNames() (dns []string, ips []net.IP) {
	return servingcert.ServiceNames(o.ServiceNamespace, serviceName), []net.IP{net.ParseIP("127.0.0.1")}
}

// servingCertMode is the serving certificate mode in effect.
func (o *Options) servingCertMode() string {
	cert := o.SecureServing.ServerCert.CertKey
	return o.ServingCert.mode(cert.CertFile, cert.KeyFile)
}

// RESTConfig is the client configuration of a kubeconfig flag (--kubeconfig,
// --worker-cluster-kubeconfig): the file's, or the in-cluster one when empty.
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return rest.InClusterConfig()
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, &clientcmd.ConfigOverrides{})
	return loader.ClientConfig()
}

// renderCacheBytes is --render-cache-memory in bytes (Validate checked it).
func renderCacheBytes(flag string) int64 {
	q, err := resource.ParseQuantity(flag)
	if err != nil {
		return 0 // the default
	}
	return q.Value()
}
