// Package syncer materialises, for every MachineDeployment that names an
// OperatingSystemProfile, the Secrets machine-controller waits for: the
// bootstrap and provisioning payloads in cloud-init-settings, the kubelet
// bootstrap token and kubeconfig, and the least-privilege fetch token with its
// RBAC. It renders through the same cache the API serves from, re-renders when
// any input changes, keeps the last good Secrets when a render fails, and
// removes everything of MachineDeployments that are gone, without a finalizer.
package syncer

import (
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	overlaysclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned/typed/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/overlays"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// Config is everything the syncer needs. Informers are shared with the API and
// started by the caller; the syncer only adds event handlers to them.
type Config struct {
	// Client writes Secrets, tokens, RBAC, Events and the cloud-init-settings
	// namespace in the cluster of the MachineDeployments (the worker cluster).
	// Give it a QPS that allows ~10 writes per MachineDeployment.
	Client kubernetes.Interface
	// MachineDeployments is the informer of informers.NewMachineDeployments.
	MachineDeployments cache.SharedIndexInformer
	// MachineSets is the informer of informers.NewMachineSets;
	// nil if MachineSets are not watched.
	MachineSets cache.SharedIndexInformer
	// Machines reads the Machines of an MD and whether they joined, and
	// MachineInformer is their informer; both nil if Machines are not watched
	// (then an MD that switched to MachineJoin loses what it had in the
	// compatibility mode at once, not once its Machines joined).
	Machines        *machines.MachineReader
	MachineInformer cache.SharedIndexInformer
	// Profiles is the OperatingSystemProfile informer (management cluster).
	Profiles cache.SharedIndexInformer
	// Overlays is the OperatingSystemProfileOverlay informer (management
	// cluster); nil without overlays. The syncer re-syncs the MDs of an
	// overlay that changes and writes the overlay's status through
	// OverlayClient; OverlaySelector says which MDs an overlay selects.
	Overlays        cache.SharedIndexInformer
	OverlayClient   overlaysclient.OverlaysV1alpha1Interface
	OverlaySelector *overlays.Selector
	// Tokens is the informer of the tokens the syncer keeps.
	Tokens *tokens.Informer
	// Payloads is the informer of the Secrets the syncer writes.
	Payloads *informers.Payloads
	// BootReports is the informer of the machines' boot reports: a report
	// goes with its Machine (MachineInformer), its MachineDeployment, or
	// after BootReportTTL.
	// Without both, the syncer leaves reports alone.
	BootReports *bootreports.Informer
	// BootReportTTL is how long a report is kept after its last write.
	BootReportTTL time.Duration
	// Nodes is the informer of the Nodes' metadata (the one Machines reads):
	// with it, a report still Provisioning is completed once its machine's
	// Node registers (reason NodeRegistered). Nil leaves reports as written.
	Nodes cache.SharedIndexInformer
	// Resolver renders a MachineDeployment, the same output the API serves, so
	// that the Secrets and the API never disagree.
	Resolver resolve.Interface
	// Facts give the API server URL and CA nodes join, for the kubelet's
	// bootstrap kubeconfig.
	Facts resolve.FactsSource
	// Refresh re-syncs every MachineDeployment on each receive: the render
	// inputs shared by all of them (cluster CA, registry credentials) changed.
	// Nil never fires.
	Refresh <-chan struct{}
	// Recorder records Events on MachineDeployments; one on Client if nil.
	Recorder record.EventRecorder
	// ProfileNamespace is where an OSP is looked up when the MachineDeployment
	// does not say (--namespace).
	ProfileNamespace string
	// TokenTTL and TokenRenewBefore set the validity of tokens and when they
	// are extended.
	TokenTTL, TokenRenewBefore time.Duration
	// Workers is the number of MachineDeployments synced in parallel.
	Workers int
	// ResyncPeriod is how often every MachineDeployment is synced again and
	// objects of vanished MachineDeployments are swept.
	ResyncPeriod time.Duration
}

// Options are the syncer's settings, from the flags.
type Options struct {
	TokenTTL, TokenRenewBefore time.Duration
	Workers                    int
	ResyncPeriod               time.Duration
	// BootReportTTL is how long a boot report is kept after its last write.
	BootReportTTL time.Duration
}

// Defaults of Config.
const (
	DefaultTokenTTL         = 24 * time.Hour
	DefaultTokenRenewBefore = 12 * time.Hour
	DefaultWorkers          = 8
	DefaultResyncPeriod     = 10 * time.Minute
)

func (c *Config) validate() error {
	var errs []error
	if c.Client == nil {
		errs = append(errs, errors.New("syncer: Client is required"))
	}
	if c.MachineDeployments == nil || c.Profiles == nil || c.Tokens == nil || c.Payloads == nil {
		errs = append(errs, errors.New("syncer: MachineDeployments, Profiles, Tokens and Payloads informers are required"))
	}
	if c.Overlays != nil && (c.OverlayClient == nil || c.OverlaySelector == nil) {
		errs = append(errs, errors.New("syncer: Overlays needs OverlayClient and OverlaySelector"))
	}
	if c.Resolver == nil || c.Facts == nil {
		errs = append(errs, errors.New("syncer: Resolver and Facts are required"))
	}
	if c.TokenRenewBefore >= c.TokenTTL && c.TokenTTL > 0 {
		errs = append(errs, errors.New("syncer: token renew-before must be shorter than the token TTL"))
	}
	return errors.Join(errs...)
}

func (c *Config) complete() {
	if c.TokenTTL <= 0 {
		c.TokenTTL = DefaultTokenTTL
	}
	if c.TokenRenewBefore <= 0 {
		c.TokenRenewBefore = c.TokenTTL / 2
	}
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.ResyncPeriod <= 0 {
		c.ResyncPeriod = DefaultResyncPeriod
	}
	if c.BootReportTTL <= 0 {
		c.BootReportTTL = DefaultBootReportTTL
	}
	if c.ProfileNamespace == "" {
		c.ProfileNamespace = metav1.NamespaceSystem
	}
}
