// Package syncer materialises, for every MachineDeployment that names an
// OperatingSystemProfile, the Secrets machine-controller waits for: the
// bootstrap and provisioning payloads in cloud-init-settings, the kubelet
// bootstrap token and kubeconfig, and the least-privilege fetch token with its
// RBAC. It renders through the same cache the API serves from, re-renders when
// any input changes, keeps the last good Secrets when a render fails, and
// removes everything of MachineDeployments that are gone, without a finalizer.
package syncer

import (
	"context"
	"errors"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/osm-apiserver/osm-apiserver/pkg/bootstraptoken"
	"github.com/osm-apiserver/osm-apiserver/pkg/rendercache"
)

// Renderer returns the render of a MachineDeployment: the same cached entry the
// API serves, so that the Secrets and the API never disagree. A failed render is
// an entry with Err set.
type Renderer interface {
	Render(ctx context.Context, md *clusterv1alpha1.MachineDeployment) *rendercache.Entry
}

// ClusterSource returns the API server URL and CA that nodes use, for the
// kubelet's bootstrap kubeconfig.
type ClusterSource interface {
	Cluster() (bootstraptoken.Cluster, error)
}

// Config is everything the syncer needs. Informers are shared with the API and
// started by the caller; the syncer only adds event handlers to them.
type Config struct {
	// Client writes Secrets, tokens, RBAC, Events and the cloud-init-settings
	// namespace in the cluster of the MachineDeployments (the worker cluster).
	// Give it a QPS that allows ~10 writes per MachineDeployment.
	Client kubernetes.Interface
	// MachineDeployments is the typed informer of package machinedeployments.
	MachineDeployments cache.SharedIndexInformer
	// Profiles is the OperatingSystemProfile informer (management cluster).
	Profiles cache.SharedIndexInformer
	// Secrets are the informers of the Secrets we write.
	Secrets *SecretInformers
	// Renderer renders a MachineDeployment through the API's cache.
	Renderer Renderer
	// Cluster is the API server nodes join.
	Cluster ClusterSource
	// Triggers are informers of inputs shared by all MachineDeployments (the
	// cluster CA, ...): any change of theirs re-syncs every MachineDeployment.
	Triggers []cache.SharedInformer
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
	if c.MachineDeployments == nil || c.Profiles == nil || c.Secrets == nil {
		errs = append(errs, errors.New("syncer: MachineDeployments, Profiles and Secrets informers are required"))
	}
	if c.Renderer == nil || c.Cluster == nil {
		errs = append(errs, errors.New("syncer: Renderer and Cluster are required"))
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
	if c.ProfileNamespace == "" {
		c.ProfileNamespace = bootstraptoken.Namespace
	}
}
