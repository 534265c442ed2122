package options

import (
	"errors"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/component-base/config/options"

	"github.com/osm-apiserver/osm-apiserver/pkg/server"
	"github.com/osm-apiserver/osm-apiserver/pkg/syncer"
)

// SyncerFlags are the command-line flags of the syncer.
type SyncerFlags struct {
	TokenTTL         time.Duration
	TokenRenewBefore time.Duration
	Workers          int
	ResyncPeriod     time.Duration
	BootReportTTL    time.Duration
	LeaderElection   componentbaseconfig.LeaderElectionConfiguration
	// InstallDefaultOSPs is false with --disable-default-osps.
	InstallDefaultOSPs bool
}

// NewSyncerFlags returns the defaults.
func NewSyncerFlags() *SyncerFlags {
	return &SyncerFlags{
		TokenTTL:           syncer.DefaultTokenTTL,
		TokenRenewBefore:   syncer.DefaultTokenRenewBefore,
		Workers:            syncer.DefaultWorkers,
		ResyncPeriod:       syncer.DefaultResyncPeriod,
		BootReportTTL:      syncer.DefaultBootReportTTL,
		InstallDefaultOSPs: true,
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
func (o *SyncerFlags) AddFlags(fs *pflag.FlagSet) {
	fs.Var(negatedBool{&o.InstallDefaultOSPs}, "disable-default-osps", "Don't install the default OperatingSystemProfiles.")
	fs.Lookup("disable-default-osps").NoOptDefVal = "true"
	fs.DurationVar(&o.TokenTTL, "bootstrap-token-ttl", o.TokenTTL,
		"Validity of the per-MachineDeployment kubelet bootstrap token after each extension, and of each fetch token (at least 10m).")
	fs.DurationVar(&o.TokenRenewBefore, "bootstrap-token-renew-before", o.TokenRenewBefore,
		"Extend a bootstrap token when less than this is left before it expires; replace a fetch token when this share of the TTL is left of its life.")
	fs.IntVar(&o.Workers, "syncer-workers", o.Workers, "MachineDeployments synced in parallel.")
	fs.DurationVar(&o.ResyncPeriod, "syncer-resync-period", o.ResyncPeriod,
		"How often every MachineDeployment is synced again and leftovers of deleted ones are removed.")
	fs.DurationVar(&o.BootReportTTL, "boot-report-ttl", o.BootReportTTL,
		"How long a machine's boot report is kept after its last step record; it goes earlier with its Machine or MachineDeployment.")
	options.BindLeaderElectionFlags(&o.LeaderElection, fs)
}

// Validate checks the flags.
func (o *SyncerFlags) Validate() []error {
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
	if o.BootReportTTL < time.Minute {
		errs = append(errs, errors.New("--boot-report-ttl must be at least 1m"))
	}
	return errs
}

// ApplyTo copies the flags into cfg. The Lease lives in the server's
// --namespace unless --leader-elect-resource-namespace says otherwise.
func (o *SyncerFlags) ApplyTo(cfg *server.Config) {
	cfg.Syncer.TokenTTL, cfg.Syncer.TokenRenewBefore = o.TokenTTL, o.TokenRenewBefore
	cfg.Syncer.Workers, cfg.Syncer.ResyncPeriod = o.Workers, o.ResyncPeriod
	cfg.Syncer.BootReportTTL = o.BootReportTTL
	cfg.InstallDefaultOSPs = o.InstallDefaultOSPs
	le := o.LeaderElection
	cfg.LeaderElection = server.LeaderElection{
		Enabled:       le.LeaderElect,
		Namespace:     le.ResourceNamespace,
		Name:          le.ResourceName,
		LeaseDuration: le.LeaseDuration.Duration,
		RenewDeadline: le.RenewDeadline.Duration,
		RetryPeriod:   le.RetryPeriod.Duration,
	}
}

// negatedBool is a flag that sets *b to the negation of its value.
type negatedBool struct{ b *bool }

func (n negatedBool) String() string {
	if n.b == nil {
		return "false"
	}
	return strconv.FormatBool(!*n.b)
}

func (n negatedBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	*n.b = !v
	return err
}

func (n negatedBool) Type() string { return "bool" }
