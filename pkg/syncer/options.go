package syncer

import (
	"errors"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/component-base/config/options"
)

// Options are the command-line flags of the syncer. --disable-default-osps
// belongs to the serve command.
type Options struct {
	TokenTTL         time.Duration
	TokenRenewBefore time.Duration
	Workers          int
	ResyncPeriod     time.Duration
	LeaderElection   componentbaseconfig.LeaderElectionConfiguration
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		TokenTTL:         DefaultTokenTTL,
		TokenRenewBefore: DefaultTokenRenewBefore,
		Workers:          DefaultWorkers,
		ResyncPeriod:     DefaultResyncPeriod,
		LeaderElection: componentbaseconfig.LeaderElectionConfiguration{
			LeaderElect:   true,
			LeaseDuration: metav1.Duration{Duration: 15 * time.Second},
			RenewDeadline: metav1.Duration{Duration: 10 * time.Second},
			RetryPeriod:   metav1.Duration{Duration: 2 * time.Second},
			ResourceLock:  "leases",
			ResourceName:  "osm-apiserver-syncer",
		},
	}
}

// AddFlags adds the syncer's flags to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.TokenTTL, "bootstrap-token-ttl", o.TokenTTL,
		"Validity of the per-MachineDeployment bootstrap and fetch tokens after each extension.")
	fs.DurationVar(&o.TokenRenewBefore, "bootstrap-token-renew-before", o.TokenRenewBefore,
		"Extend a token when less than this is left before it expires.")
	fs.IntVar(&o.Workers, "syncer-workers", o.Workers, "MachineDeployments synced in parallel.")
	fs.DurationVar(&o.ResyncPeriod, "syncer-resync-period", o.ResyncPeriod,
		"How often every MachineDeployment is synced again and leftovers of deleted ones are removed.")
	options.BindLeaderElectionFlags(&o.LeaderElection, fs)
}

// Validate checks the flags.
func (o *Options) Validate() []error {
	var errs []error
	if o.TokenTTL <= 0 || o.TokenRenewBefore <= 0 || o.TokenRenewBefore >= o.TokenTTL {
		errs = append(errs, errors.New("--bootstrap-token-renew-before must be positive and shorter than --bootstrap-token-ttl"))
	}
	if o.Workers <= 0 {
		errs = append(errs, errors.New("--syncer-workers must be positive"))
	}
	if o.ResyncPeriod < time.Second {
		errs = append(errs, errors.New("--syncer-resync-period must be at least 1s"))
	}
	return errs
}

// ApplyTo copies the flags into cfg.
func (o *Options) ApplyTo(cfg *Config) {
	cfg.TokenTTL, cfg.TokenRenewBefore = o.TokenTTL, o.TokenRenewBefore
	cfg.Workers, cfg.ResyncPeriod = o.Workers, o.ResyncPeriod
}

// LeaderElectionFor returns the election of o, with the Lease in namespace
// (--namespace) unless --leader-elect-resource-namespace says otherwise.
func (o *Options) LeaderElectionFor(client kubernetes.Interface, namespace string) LeaderElection {
	le := o.LeaderElection
	if le.ResourceNamespace != "" {
		namespace = le.ResourceNamespace
	}
	return LeaderElection{
		Enabled:       le.LeaderElect,
		Client:        client,
		Namespace:     namespace,
		Name:          le.ResourceName,
		LeaseDuration: le.LeaseDuration.Duration,
		RenewDeadline: le.RenewDeadline.Duration,
		RetryPeriod:   le.RetryPeriod.Duration,
	}
}
