// Package inputs resolves everything one MachineDeployment's render needs — its
// profile, the cluster facts, the node options and its tokens — from informer
// caches and flags, and renders through the render cache under a key made of
// all of them.
package inputs

import (
	"context"
	"fmt"
	"sync/atomic"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	osplisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/rendercache"
)

// Renderer renders one input; *render.Renderer implements it.
type Renderer interface {
	Render(in render.Input) (*render.Result, error)
}

// Config is what a Resolver reads from.
type Config struct {
	// Namespace holds the profiles of MDs that don't name a namespace.
	Namespace string
	// Profiles lists OperatingSystemProfiles.
	Profiles osplisters.OperatingSystemProfileLister
	// Cluster is the cluster nodes join at start, until SetFacts; its tokens
	// are ignored in favour of Credentials.
	Cluster render.ClusterInfo
	// Node are the node options at start, until SetFacts.
	Node render.NodeOptions
	// Credentials supplies each MD's tokens.
	Credentials CredentialSource
	// Renderer renders; Cache keeps its results.
	Renderer Renderer
	Cache    *rendercache.Cache
}

// Resolver renders MDs through the render cache. It implements
// registry.Renderer.
type Resolver struct {
	cfg    Config
	facts  atomic.Pointer[facts] // swapped whole by SetFacts
	hashes *mdHashes
}

// New returns a Resolver.
func New(cfg Config) (*Resolver, error) {
	// One hash per MD, as many as the render cache holds renders.
	r := &Resolver{cfg: cfg, hashes: newMDHashes(cfg.Cache.Size())}
	if _, err := r.SetFacts(Facts{Cluster: cfg.Cluster, Node: cfg.Node}); err != nil {
		return nil, err
	}
	return r, nil
}

// Render returns md's rendered output. Failures that belong to the MD — its
// profile is missing, its tokens are not there yet, the template fails — are
// in Entry.Err.
func (r *Resolver) Render(ctx context.Context, md *clusterv1alpha1.MachineDeployment) *rendercache.Entry {
	profile := osm.ProfileReference{
		Namespace: md.Annotations[render.AnnotationOSPNamespace],
		Name:      md.Annotations[render.AnnotationOSP],
	}
	if profile.Namespace == "" {
		profile.Namespace = r.cfg.Namespace
	}
	osp, err := r.cfg.Profiles.OperatingSystemProfiles(profile.Namespace).Get(profile.Name)
	if errors.IsNotFound(err) {
		return &rendercache.Entry{Profile: profile, Err: fmt.Errorf("operatingsystemprofile %s/%s not found", profile.Namespace, profile.Name)}
	}
	if err != nil {
		return &rendercache.Entry{Profile: profile, Err: fmt.Errorf("failed to get operatingsystemprofile %s/%s: %w", profile.Namespace, profile.Name, err)}
	}
	profile.Version = osp.Spec.Version
	creds, err := r.cfg.Credentials.Credentials(ctx, md)
	if err != nil {
		return &rendercache.Entry{Profile: profile, Err: fmt.Errorf("machinedeployment %s/%s: no credentials: %w", md.Namespace, md.Name, err)}
	}
	mdHash, err := r.hashes.get(md)
	if err != nil {
		return &rendercache.Entry{Profile: profile, Err: err}
	}
	// One load: the key and the render must be of the same facts.
	f := r.facts.Load()
	key := cacheKey(md, mdHash, osp, f.hash, creds.Version)
	return r.cfg.Cache.Get(key, func() *rendercache.Entry {
		cluster := f.Cluster
		cluster.BootstrapToken, cluster.CloudInitGetterToken = creds.BootstrapToken, creds.CloudInitGetterToken
		res, err := r.cfg.Renderer.Render(render.Input{OSP: osp, MachineDeployment: md, Cluster: cluster, Node: f.Node})
		if err != nil {
			// Say what the MD asked for even though the render failed.
			return rendercache.NewFailed(profile, &osm.OperatingSystemConfigSpec{OSName: string(osp.Spec.OSName), OSVersion: osp.Spec.OSVersion}, err)
		}
		cfg := res.Config.DeepCopy()
		redact(cfg, secrets(creds, f.Node))
		entry, err := newEntry(profile, cfg, res)
		if err != nil {
			return rendercache.NewFailed(profile, nil, fmt.Errorf("machinedeployment %s/%s: %w", md.Namespace, md.Name, err))
		}
		return entry
	})
}

func newEntry(profile osm.ProfileReference, cfg *osm.OperatingSystemConfigSpec, res *render.Result) (*rendercache.Entry, error) {
	bootstrap, err := rendercache.NewPayload(res.Bootstrap.Format, res.Bootstrap.UserData)
	if err != nil {
		return nil, err
	}
	provisioning, err := rendercache.NewPayload(res.Provisioning.Format, res.Provisioning.UserData)
	if err != nil {
		return nil, err
	}
	return rendercache.NewEntry(profile, cfg, bootstrap, provisioning)
}

// Forget drops what the resolver remembers about a deleted MD.
func (r *Resolver) Forget(uid types.UID) {
	r.hashes.forget(uid)
}
