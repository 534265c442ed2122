package options

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	cliflag "k8s.io/component-base/cli/flag"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed"
	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

// serviceName is the Service in front of osm-apiserver (artifacts/deploy); the
// self-signed serving certificate is valid for it, because kube-apiserver checks
// the aggregated server's certificate for <service>.<namespace>.svc.
const serviceName = "osm-apiserver"

// Options are the flags of `osm-apiserver serve`: the generic server's
// recommended options without etcd, as the server stores nothing, plus ours.
type Options struct {
	SecureServing  *genericoptions.SecureServingOptionsWithLoopback
	Authentication *genericoptions.DelegatingAuthenticationOptions
	Authorization  *genericoptions.DelegatingAuthorizationOptions
	Features       *genericoptions.FeatureOptions
	Logs           *logsapi.LoggingConfiguration

	Syncer      *SyncerFlags
	MachineJoin *MachineJoinFlags
	Node        *NodeFlags
	Cluster     *ClusterFlags
	ServingCert *ServingCertFlags

	// Kubeconfig is the management cluster: OperatingSystemProfiles and
	// overlays, the syncer's Lease, the serving certificate's Secret.
	Kubeconfig string
	// WorkerClusterKubeconfig is the cluster whose MachineDeployments are
	// served, where nodes join and the APIService is registered, and so the
	// default of delegated authentication and authorization; empty means the
	// management cluster.
	WorkerClusterKubeconfig string
	// Namespace holds the profiles of MDs that don't name a namespace.
	Namespace string
	// ServiceNamespace is the namespace of the Service in front of the server:
	// the serving certificate's names, and the Secret that keeps it.
	ServiceNamespace string
	// RenderCacheMemory bounds the rendered configs and payloads kept, a quantity.
	RenderCacheMemory string
	// RenderCacheSize is the former count bound of the render cache: deprecated, ignored.
	RenderCacheSize int
	// ConcurrentRenders bounds the renders running at once.
	ConcurrentRenders int
	// ConcurrentPreviews bounds the ProfileReview renders running at once,
	// in slots of their own.
	ConcurrentPreviews int
	// WatchHistory is how many changes a watch can resume from.
	WatchHistory int
	// MemoryLimit is the Go runtime's soft memory limit: "auto" or a quantity.
	MemoryLimit string
	// GCPercent is the garbage collector's target percentage, unless GOGC is set.
	GCPercent int
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	o := &Options{
		SecureServing:      genericoptions.NewSecureServingOptions().WithLoopback(),
		Authentication:     genericoptions.NewDelegatingAuthenticationOptions(),
		Authorization:      genericoptions.NewDelegatingAuthorizationOptions(),
		Features:           genericoptions.NewFeatureOptions(),
		Logs:               logsapi.NewLoggingConfiguration(),
		Node:               NewNodeFlags(),
		Syncer:             NewSyncerFlags(),
		MachineJoin:        NewMachineJoinFlags(),
		Cluster:            &ClusterFlags{},
		ServingCert:        NewServingCertFlags(),
		Namespace:          "kube-system",
		ServiceNamespace:   "kube-system",
		RenderCacheMemory:  resource.NewQuantity(resolve.DefaultCacheBytes, resource.BinarySI).String(),
		ConcurrentRenders:  resolve.DefaultConcurrentRenders(),
		ConcurrentPreviews: resolve.DefaultConcurrentPreviews(),
		WatchHistory:       changefeed.DefaultHistory,
		MemoryLimit:        memoryLimitAuto,
		GCPercent:          defaultGCPercent,
	}
	o.SecureServing.BindPort = 8443
	o.SecureServing.ServerCert.PairName = "osm-apiserver"
	// Priority and fairness needs a core client and informers of its own; a
	// read-only server behind kube-apiserver's own APF does not need it.
	o.Features.EnablePriorityAndFairness = false
	return o
}

// Flags returns the flags in named sections, as `--help` shows them.
func (o *Options) Flags() cliflag.NamedFlagSets {
	var fss cliflag.NamedFlagSets
	o.addOSMFlags(fss.FlagSet("osm"))
	o.Node.AddFlags(fss.FlagSet("node"))
	o.Syncer.AddFlags(fss.FlagSet("syncer"))
	o.MachineJoin.AddFlags(fss.FlagSet("machine join"))
	o.Cluster.AddFlags(fss.FlagSet("cluster"))
	o.SecureServing.AddFlags(fss.FlagSet("secure serving"))
	o.ServingCert.AddFlags(fss.FlagSet("secure serving"))
	o.Authentication.AddFlags(fss.FlagSet("authentication"))
	o.Authorization.AddFlags(fss.FlagSet("authorization"))
	o.Features.AddFlags(fss.FlagSet("features"))
	logsapi.AddFlags(o.Logs, fss.FlagSet("logs"))
	return fss
}

func (o *Options) addOSMFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig of the management cluster (OperatingSystemProfiles, overlays, the syncer's Lease, the serving certificate's Secret); default: in-cluster config. Without --worker-cluster-kubeconfig also the default of --authentication-kubeconfig and --authorization-kubeconfig.")
	fs.StringVar(&o.WorkerClusterKubeconfig, "worker-cluster-kubeconfig", o.WorkerClusterKubeconfig, "Kubeconfig of the cluster whose MachineDeployments are served, where nodes join and the APIService must be registered (its caBundle is kept there); default: the management cluster. When set, also the default of --authentication-kubeconfig and --authorization-kubeconfig: nodes and users authenticate at the worker cluster.")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "Namespace of the OperatingSystemProfiles of MachineDeployments that don't name one with k8c.io/operating-system-profile-namespace.")
	fs.StringVar(&o.ServiceNamespace, "service-namespace", o.ServiceNamespace, "Namespace of the osm-apiserver Service; a self-managed or self-signed serving certificate is valid for osm-apiserver.<namespace>.svc, and the self-managed one is kept in a Secret of this namespace.")
	fs.StringVar(&o.RenderCacheMemory, "render-cache-memory", o.RenderCacheMemory, "Bytes of rendered configs and payloads kept in memory, a quantity such as 32Mi (least recently used are dropped and rendered again when read). Every MachineDeployment's current output summary, payload sizes and digests are kept whatever the fleet size, so a table of OSCs and the syncer's checks never render again.")
	fs.IntVar(&o.RenderCacheSize, "render-cache-size", o.RenderCacheSize, "Ignored: the render cache keeps every MachineDeployment's output, bounded in bytes by --render-cache-memory.")
	_ = fs.MarkDeprecated("render-cache-size", "the render cache is bounded in bytes: use --render-cache-memory")
	fs.IntVar(&o.ConcurrentRenders, "max-concurrent-renders", o.ConcurrentRenders, "Renders running at once; more wait (osm_apiserver_render_waiting). A render may hold up to 32 MiB of template values, so this also bounds their memory. Default: twice the CPUs (GOMAXPROCS), at least 4.")
	fs.IntVar(&o.ConcurrentPreviews, "max-concurrent-previews", o.ConcurrentPreviews, "ProfileReview renders running at once, in slots of their own (never --max-concurrent-renders'): more wait (osm_apiserver_review_renders_waiting), and stop when their client goes away. Default: half the CPUs (GOMAXPROCS), at least 1.")
	fs.StringVar(&o.MemoryLimit, "memory-limit", o.MemoryLimit, "Soft memory limit of the Go runtime (a quantity such as 256Mi; 0 for none). \"auto\": GOMEMLIMIT if set, else 75% of the container's memory limit if there is one, else none.")
	fs.IntVar(&o.GCPercent, "gc-percent", o.GCPercent, "Garbage collection target of the Go runtime, as GOGC (which wins when set): the heap may grow this many percent over what is live before a collection.")
	fs.IntVar(&o.WatchHistory, "watch-history", o.WatchHistory, "Changes kept for watches resuming from a resourceVersion; older ones get 410 Gone and list again.")
}

// Validate checks the options that can be checked without a cluster.
func (o *Options) Validate() error {
	var errs []error
	errs = append(errs, o.SecureServing.Validate()...)
	errs = append(errs, o.Authentication.Validate()...)
	errs = append(errs, o.Authorization.Validate()...)
	errs = append(errs, o.Features.Validate()...)
	errs = append(errs, o.Syncer.Validate()...)
	errs = append(errs, o.MachineJoin.Validate()...)
	cert := o.SecureServing.ServerCert.CertKey
	errs = append(errs, o.ServingCert.Validate(cert.CertFile, cert.KeyFile)...)
	if err := logsapi.Validate(o.Logs, nil, nil); len(err) > 0 {
		errs = append(errs, err.ToAggregate())
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("--namespace must not be empty"))
	}
	if q, err := resource.ParseQuantity(o.RenderCacheMemory); err != nil || q.Sign() <= 0 {
		errs = append(errs, fmt.Errorf("--render-cache-memory must be a positive quantity such as 32Mi, got %q", o.RenderCacheMemory))
	}
	if o.ConcurrentRenders < 1 {
		errs = append(errs, fmt.Errorf("--max-concurrent-renders must be positive, got %d", o.ConcurrentRenders))
	}
	if o.ConcurrentPreviews < 1 {
		errs = append(errs, fmt.Errorf("--max-concurrent-previews must be positive, got %d", o.ConcurrentPreviews))
	}
	if o.WatchHistory < 1 {
		errs = append(errs, fmt.Errorf("--watch-history must be positive, got %d", o.WatchHistory))
	}
	if o.GCPercent < 1 {
		errs = append(errs, fmt.Errorf("--gc-percent must be positive, got %d", o.GCPercent))
	}
	if err := validateMemoryLimit(o.MemoryLimit); err != nil {
		errs = append(errs, err)
	}
	if _, err := o.Node.NodeOptions(); err != nil {
		errs = append(errs, err)
	}
	if o.Cluster.NodeAPIServer != "" {
		if err := facts.ValidateNodeAPIServer(o.Cluster.NodeAPIServer); err != nil {
			errs = append(errs, fmt.Errorf("--node-api-server: %w", err))
		}
	}
	return errors.Join(errs...)
}
