// Package resolve turns a MachineDeployment into its rendered output: it
// resolves everything the render needs — the profile the MD names, the shared
// facts, the MD's tokens — renders through the render cache under a key made
// of all of them, and redacts the secrets from the config the API shows. The
// API (pkg/registry) and the syncer both read MachineDeployments' output
// through Interface, so the Secrets and the API never disagree.
package resolve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	osplisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/lru"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
	"github.com/osm-apiserver/osm-apiserver/pkg/overlays"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// Interface returns the rendered output of a MachineDeployment, from the
// render cache when its inputs are unchanged. Failures that belong to the MD —
// its profile is missing, its tokens are not there yet, a template fails — are
// in Rendered.Err, never a failed call, so one broken MD never fails a LIST.
type Interface interface {
	Resolve(ctx context.Context, md *clusterv1alpha1.MachineDeployment) *Rendered
}

// FactsSource returns the shared facts renders use now; nil before there are
// any. *facts.Source implements it.
type FactsSource interface {
	Current() *facts.Facts
}

// Config is what a Resolver reads from.
type Config struct {
	// ProfileNamespace holds the profiles of MDs that name no namespace.
	ProfileNamespace string
	// Profiles lists OperatingSystemProfiles.
	Profiles osplisters.OperatingSystemProfileLister
	// Facts are the cluster facts and node options.
	Facts FactsSource
	// Tokens supplies each MD's tokens.
	Tokens TokenSource
	// Claims says whether an MD may have the Secrets machine-controller
	// reads for it; nil allows every MD (offline renders, tests).
	Claims SecretClaims
	// Revisions finds the template of an MD's revision; nil renders every
	// MD from its own template.
	Revisions *machines.RevisionTemplates
	// Overlays finds the overlays that apply to an MD; nil applies none.
	Overlays *overlays.Selector
	// Render renders one input; nil means a new render.Renderer's.
	Render func(render.Input) (*render.Result, error)
	// NodeJoin says how nodes of a profile with its overlays, for a
	// container runtime, get their kubelet credentials; nil means the
	// renderer's of Render (a new render.Renderer's when Render is set).
	NodeJoin func(*ospv1alpha1.OperatingSystemProfile, []*overlaysv1alpha1.OperatingSystemProfileOverlay, string) (osm.NodeJoinMode, error)
	// CacheBytes bounds the rendered configs and payloads the render cache
	// keeps (see Cache); <= 0 means DefaultCacheBytes.
	CacheBytes int64
	// ConcurrentRenders bounds the renders running at once; <= 0 means
	// DefaultConcurrentRenders.
	ConcurrentRenders int
	// PreviewRender renders the inputs of previews (ProfileReviews); nil
	// means Render when that is set (tests), else a render.Renderer of
	// its own (PreviewRenderer), so that candidates never take the place
	// of the MDs' own parsed profiles in the renderer's caches.
	PreviewRender func(render.Input) (*render.Result, error)
	// PreviewNodeJoin is NodeJoin for previews; nil means NodeJoin when
	// Render is set, else PreviewRender's renderer's.
	PreviewNodeJoin func(*ospv1alpha1.OperatingSystemProfile, []*overlaysv1alpha1.OperatingSystemProfileOverlay, string) (osm.NodeJoinMode, error)
	// ConcurrentPreviews bounds the preview renders running at once, in
	// slots of their own: reviews never wait for the render cache's
	// slots, nor the cache's renders (MachineJoin, the syncer, OSC reads)
	// for theirs. <= 0 means DefaultConcurrentPreviews.
	ConcurrentPreviews int
}

// DefaultConcurrentPreviews is how many preview renders run at once by
// default: half the CPUs Go uses, at least 1, so that reviews leave CPU
// to the renders nodes wait for.
func DefaultConcurrentPreviews() int {
	return max(1, runtime.GOMAXPROCS(0)/2)
}

// PreviewRenderTime bounds the templates of one preview render (the
// cache's renders get a second): a candidate is anyone's with the right to
// review, and a profile that needs more would not be one to ship.
const PreviewRenderTime = 250 * time.Millisecond

// previewCompiledOSPs bounds the candidates' parsed profiles the preview
// renderer keeps: each review's candidate is new, so the cache only saves
// the parse across the MDs of one review.
const previewCompiledOSPs = 8

// PreviewRenderer returns the renderer previews use by default: caches of
// its own, small, and a short budget.
func PreviewRenderer() *render.Renderer {
	return render.NewRendererWith(render.Options{CompiledOSPs: previewCompiledOSPs, RenderTime: PreviewRenderTime})
}

// Resolver implements Interface.
type Resolver struct {
	cfg    Config
	cache  *Cache
	hashes *lru.Cache[types.UID, mdHash]
	// previews holds a token per preview render running.
	previews chan struct{}
}

var _ Interface = &Resolver{}

// New returns a Resolver.
func New(cfg Config) *Resolver {
	if cfg.PreviewRender == nil && cfg.Render == nil {
		previews := PreviewRenderer()
		cfg.PreviewRender = previews.Render
		if cfg.PreviewNodeJoin == nil {
			cfg.PreviewNodeJoin = previews.NodeJoin
		}
	}
	if cfg.PreviewRender == nil {
		cfg.PreviewRender = cfg.Render // a test's renderer renders previews too
	}
	renderer := render.NewRenderer()
	if cfg.Render == nil {
		cfg.Render = renderer.Render
	}
	if cfg.NodeJoin == nil {
		cfg.NodeJoin = renderer.NodeJoin
	}
	if cfg.PreviewNodeJoin == nil {
		cfg.PreviewNodeJoin = cfg.NodeJoin
	}
	if cfg.ConcurrentPreviews <= 0 {
		cfg.ConcurrentPreviews = DefaultConcurrentPreviews()
	}
	cache := NewCache(cfg.CacheBytes, cfg.ConcurrentRenders)
	// One hash per MD, as the render cache keeps one output per MD; Forget
	// drops both when the MD goes.
	return &Resolver{cfg: cfg, cache: cache, hashes: lru.New[types.UID, mdHash](maxMachineDeployments),
		previews: make(chan struct{}, cfg.ConcurrentPreviews)}
}

// Pending reasons.
const (
	waitingForTokens = "waiting for the syncer to create tokens"
	waitingForFacts  = "waiting for the cluster facts (kube-public/cluster-info, registry credentials)"
	// The payloads stay those of the MD's current revision meanwhile.
	waitingForRevision = "template changed; waits for the MD's next revision"
)

// Resolve implements Interface.
func (r *Resolver) Resolve(ctx context.Context, md *clusterv1alpha1.MachineDeployment) *Rendered {
	return r.resolve(ctx, md, nil, Payloads)
}

// Audience is who a preview is for: what its caller may read of an MD.
type Audience int

const (
	// Payloads: the caller may read the MD's provisioningpayloads, so the
	// real values; a preview renders them and the view.
	Payloads Audience = iota
	// ViewOnly: the caller may read the MD's OSC only. A preview renders
	// the view alone; nothing of it depends on a secret's value, not even
	// how long it took.
	ViewOnly
)

// Candidate is a profile or an overlay under review: it takes the place of
// the one of its namespace and name, or is added. Its UID, with its
// ResourceVersion (a profile) or Generation (an overlay), must be unique to
// the review: renders key their parse by them.
type Candidate struct {
	OSP     *ospv1alpha1.OperatingSystemProfile
	Overlay *overlaysv1alpha1.OperatingSystemProfileOverlay
}

// Preview renders md as Resolve does, with c in place of the profile or
// overlay of its namespace and name, for a: a ViewOnly preview renders the
// view only, and its payloads (sizes, digests), error and config are all
// the view's. Nothing is cached; renders wait for one of the previews' own
// slots, with the previews' own renderer (see Config.PreviewRender), and
// a preview whose ctx ends before a slot is free fails with ctx's error.
// The output's payloads carry their sizes and digests only, and its config
// is kept unpacked: a review reads no more.
func (r *Resolver) Preview(ctx context.Context, md *clusterv1alpha1.MachineDeployment, c *Candidate, a Audience) *Rendered {
	if c == nil {
		c = &Candidate{}
	}
	return r.resolve(ctx, md, c, a)
}

// profile returns the profile md names: the candidate's, when it is that one.
func (r *Resolver) profile(p machinecontroller.Profile, c *Candidate) (*ospv1alpha1.OperatingSystemProfile, error) {
	if c != nil && c.OSP != nil && c.OSP.Namespace == p.Namespace && c.OSP.Name == p.Name {
		return c.OSP, nil
	}
	return r.cfg.Profiles.OperatingSystemProfiles(p.Namespace).Get(p.Name)
}

func (r *Resolver) resolve(ctx context.Context, md *clusterv1alpha1.MachineDeployment, c *Candidate, a Audience) *Rendered {
	p, err := r.cfg.Revisions.ProfileOf(md, r.cfg.ProfileNamespace)
	if err != nil {
		return &Rendered{Err: err}
	}
	profile := osm.ProfileReference{Namespace: p.Namespace, Name: p.Name, Defaulted: p.Defaulted}
	osp, err := r.profile(p, c)
	if err != nil && apierrors.IsNotFound(err) { // IsNotFound allocates even for nil
		if p.Defaulted {
			return &Rendered{Profile: profile, Err: fmt.Errorf("operatingsystemprofile %s not found (the default for the MD's operating system: the MD names none in %s)",
				p, machinecontroller.AnnotationOSP)}
		}
		return &Rendered{Profile: profile, Err: fmt.Errorf("operatingsystemprofile %s not found", p)}
	}
	if err != nil {
		return &Rendered{Profile: profile, Err: fmt.Errorf("failed to get operatingsystemprofile %s: %w", p, err)}
	}
	profile.Version = osp.Spec.Version
	// Before the tokens: an MD that cannot have its Secrets gets none.
	if r.cfg.Claims != nil {
		if err := r.cfg.Claims.Check(md); err != nil {
			return NewFailed(profile, requestedSpec(osp), err)
		}
	}
	// One load: the key and the render must be of the same facts.
	f := r.cfg.Facts.Current()
	if f == nil {
		// No address nodes can reach is for an operator to fix: an error.
		var noServer *facts.NoAPIServerError
		if e, ok := r.cfg.Facts.(interface{ Err() error }); ok && errors.As(e.Err(), &noServer) {
			return &Rendered{Profile: profile, Err: noServer}
		}
		return &Rendered{Profile: profile, Err: &PendingError{Reason: waitingForFacts}}
	}
	var candidate *overlaysv1alpha1.OperatingSystemProfileOverlay
	if c != nil {
		candidate = c.Overlay
	}
	ovs, err := r.cfg.Overlays.ForWith(md, candidate)
	if err != nil {
		return NewFailed(profile, requestedSpec(osp), err)
	}
	// Which tokens the render needs depends on how the profile's nodes
	// join, with its overlays (one may replace the bootstrap's files).
	nodeJoin := r.cfg.NodeJoin
	if c != nil {
		nodeJoin = r.cfg.PreviewNodeJoin
	}
	mode, err := nodeJoin(osp, ovs, f.Node.ContainerRuntime)
	if err != nil {
		// The profile does not parse: its render would fail the same way.
		return NewFailed(profile, requestedSpec(osp), err)
	}
	kubelet, fetch := r.cfg.Tokens.Tokens(md)
	if mode == osm.NodeJoinMachineJoin {
		kubelet = "" // none is made for such an MD; one left over is not used
	}
	if fetch == "" || kubelet == "" && mode != osm.NodeJoinMachineJoin {
		return &Rendered{Profile: profile, NodeJoin: mode, APIServer: f.APIServer(), Err: &PendingError{Reason: waitingForTokens}}
	}
	md, mdHash, waiting, tokens, err := r.effective(md, kubelet, fetch)
	if err != nil {
		return &Rendered{Profile: profile, NodeJoin: mode, APIServer: f.APIServer(), Err: err}
	}
	render := func() *Rendered {
		var out *Rendered
		switch {
		case c == nil:
			out = r.render(md, osp, ovs, profile, f, kubelet, fetch)
		case a == ViewOnly:
			out = r.previewView(md, osp, ovs, profile, f, kubelet, fetch)
		default:
			out = r.preview(md, osp, ovs, profile, f, kubelet, fetch)
		}
		out.NodeJoin = mode
		out.APIServer = f.APIServer()
		if waiting && out.Err == nil {
			out.Waiting = waitingForRevision
		}
		out.Overlays = overlayRefs(ovs)
		return out
	}
	if c != nil {
		return r.runPreview(ctx, profile, render)
	}
	return r.cache.Get(md.UID, cacheKey(md, mdHash, waiting, osp, ovs, f.Hash(), tokens), render)
}

// render renders md's payloads and the view, for the render cache.
func (r *Resolver) render(md *clusterv1alpha1.MachineDeployment, osp *ospv1alpha1.OperatingSystemProfile, ovs []*overlaysv1alpha1.OperatingSystemProfileOverlay,
	profile osm.ProfileReference, f *facts.Facts, kubelet, fetch string) *Rendered {
	return r.renderBoth(r.cfg.Render, md, osp, ovs, profile, f, kubelet, fetch, true)
}

// preview renders md's payloads and the view with the previews' renderer,
// for a caller who may read the payloads.
func (r *Resolver) preview(md *clusterv1alpha1.MachineDeployment, osp *ospv1alpha1.OperatingSystemProfile, ovs []*overlaysv1alpha1.OperatingSystemProfileOverlay,
	profile osm.ProfileReference, f *facts.Facts, kubelet, fetch string) *Rendered {
	return r.renderBoth(r.cfg.PreviewRender, md, osp, ovs, profile, f, kubelet, fetch, false)
}

// previewView renders md's view only, with the previews' renderer, for a
// caller who may not read the payloads: the payloads' sizes and digests,
// the config and the error are all the view's, and the real values are
// never rendered, so nothing of the answer — not even its time — depends
// on them. The config is not redacted by the real values either: that
// would tell whether the view holds one of them (a candidate writing
// guesses of a password would see which one was replaced); the view got
// none, so only an input the caller reads anyway could hold one.
func (r *Resolver) previewView(md *clusterv1alpha1.MachineDeployment, osp *ospv1alpha1.OperatingSystemProfile, ovs []*overlaysv1alpha1.OperatingSystemProfileOverlay,
	profile osm.ProfileReference, f *facts.Facts, kubelet, fetch string) *Rendered {
	cluster := f.Cluster
	cluster.BootstrapToken, cluster.CloudInitGetterToken = kubelet, fetch
	view, err := r.cfg.PreviewRender(render.Input{OSP: osp, Overlays: ovs, MachineDeployment: md, Cluster: cluster, Node: f.Node, View: true})
	if err != nil {
		return NewFailed(profile, requestedSpec(osp), err)
	}
	if err := fitsSecrets(view); err != nil {
		return NewFailed(profile, requestedSpec(osp), fmt.Errorf("machinedeployment %s/%s: %w", md.Namespace, md.Name, err))
	}
	out := newPreview(profile, &view.Config, view)
	out.ViewBootstrap, out.ViewProvisioning, out.ViewEdgeScript = out.Bootstrap, out.Provisioning, out.EdgeScript
	return out
}

// renderBoth renders md's payloads and the view with fn; packed keeps the
// payloads (the render cache's outputs), else their sizes and digests only.
func (r *Resolver) renderBoth(fn func(render.Input) (*render.Result, error), md *clusterv1alpha1.MachineDeployment, osp *ospv1alpha1.OperatingSystemProfile,
	ovs []*overlaysv1alpha1.OperatingSystemProfileOverlay, profile osm.ProfileReference, f *facts.Facts, kubelet, fetch string, packed bool) *Rendered {
	cluster := f.Cluster
	cluster.BootstrapToken, cluster.CloudInitGetterToken = kubelet, fetch
	in := render.Input{OSP: osp, Overlays: ovs, MachineDeployment: md, Cluster: cluster, Node: f.Node}
	res, err := fn(in)
	// The OSC and every error shown are of the view: the same render from
	// placeholders for every secret (render.Input.View).
	in.View = true
	view, viewErr := fn(in)
	switch {
	case err != nil && viewErr != nil:
		// Say what the MD asked for even though the render failed.
		return NewFailed(profile, requestedSpec(osp), viewErr)
	case err != nil:
		// Only the real values fail: their error may quote them.
		return NewFailed(profile, requestedSpec(osp), errSecretDependent)
	}
	// By construction the view holds no secret; redact only guards against
	// a secret that equals some other input.
	redacted := secrets(kubelet, fetch, f.Node)
	var cfg *osm.OperatingSystemConfigSpec
	if err := fitsSecrets(res); err != nil {
		if cfg = requestedSpec(osp); viewErr == nil {
			cfg = &view.Config
			redact(cfg, redacted)
		}
		return NewFailed(profile, cfg, fmt.Errorf("machinedeployment %s/%s: %w", md.Namespace, md.Name, err))
	}
	if !packed {
		if viewErr == nil {
			cfg = &view.Config
			redact(cfg, redacted)
		}
		out := newPreview(profile, cfg, res)
		out.ViewErr = viewErr
		setViewPayloads(out, view)
		return out
	}
	// The view rendered, so its error is known (nil), but its config is not
	// kept: encoding and packing it cost more than both renders, and the
	// syncer, the payloads and the tables never read it. A reader of the
	// config renders the view again (viewConfig).
	var lazy func() (*osm.OperatingSystemConfigSpec, error)
	if viewErr == nil {
		lazy = func() (*osm.OperatingSystemConfigSpec, error) {
			return r.viewConfig(md, osp, ovs, f, kubelet, fetch)
		}
	}
	out, err := newRendered(profile, res, lazy)
	if err != nil {
		return NewFailed(profile, nil, fmt.Errorf("machinedeployment %s/%s: %w", md.Namespace, md.Name, err))
	}
	if viewErr != nil {
		out.ViewErr = viewErr
	}
	setViewPayloads(out, view)
	return out
}

// setViewPayloads records the sizes and digests of the view's payloads in
// out; view is nil when the view failed.
func setViewPayloads(out *Rendered, view *render.Result) {
	if view == nil {
		return
	}
	out.ViewBootstrap, out.ViewProvisioning = digest(view.Bootstrap), digest(view.Provisioning)
	if view.EdgeScript != nil {
		out.ViewEdgeScript = digest(*view.EdgeScript)
	}
}

// viewConfig renders the view of md again, from the inputs its payloads were
// rendered from, for a reader of the OSC's config.
func (r *Resolver) viewConfig(md *clusterv1alpha1.MachineDeployment, osp *ospv1alpha1.OperatingSystemProfile, ovs []*overlaysv1alpha1.OperatingSystemProfileOverlay,
	f *facts.Facts, kubelet, fetch string) (*osm.OperatingSystemConfigSpec, error) {
	cluster := f.Cluster
	cluster.BootstrapToken, cluster.CloudInitGetterToken = kubelet, fetch
	view, err := r.cfg.Render(render.Input{OSP: osp, Overlays: ovs, MachineDeployment: md, Cluster: cluster, Node: f.Node, View: true})
	if err != nil {
		// The view's error: safe to show.
		return nil, fmt.Errorf("failed to render the config again: %w", err)
	}
	redact(&view.Config, secrets(kubelet, fetch, f.Node))
	return &view.Config, nil
}

// overlayRefs are the references of the OSC's status.overlays.
func overlayRefs(ovs []*overlaysv1alpha1.OperatingSystemProfileOverlay) []osm.OverlayReference {
	if len(ovs) == 0 {
		return nil
	}
	out := make([]osm.OverlayReference, len(ovs))
	for i, o := range ovs {
		out[i] = osm.OverlayReference{Namespace: o.Namespace, Name: o.Name, Generation: o.Generation}
	}
	return out
}

// errSecretDependent is the error of a render that fails with the real
// secrets but not with placeholders: its own message could quote a secret.
var errSecretDependent = errors.New("the render fails with the real credentials but not with placeholders; its error is not shown because it could contain them (a template depends on a secret's value)")

// newRendered returns the output of the real render res; view renders its
// config when a reader asks (nil when the view failed: the config then holds
// the summary only). The summary is the real render's: OS, version, cloud and
// provisioning utility come from the profile and the MD, never from a
// secret, so they are the view's too.
func newRendered(profile osm.ProfileReference, res *render.Result, view func() (*osm.OperatingSystemConfigSpec, error)) (*Rendered, error) {
	summary := &osm.OperatingSystemConfigSpec{OSName: res.Config.OSName, OSVersion: res.Config.OSVersion, ProvisioningUtility: res.Config.ProvisioningUtility,
		CloudProvider: osm.CloudProviderSpec{Name: res.Config.CloudProvider.Name}}
	bootstrap, err := NewPayload(res.Bootstrap.Format, res.Bootstrap.UserData)
	if err != nil {
		return nil, err
	}
	provisioning, err := NewPayload(res.Provisioning.Format, res.Provisioning.UserData)
	if err != nil {
		return nil, err
	}
	var out *Rendered
	if view != nil {
		out = newLazy(profile, summary, bootstrap, provisioning, view)
	} else if out, err = NewRendered(profile, summary, bootstrap, provisioning); err != nil {
		return nil, err
	}
	if res.EdgeScript == nil {
		return out, nil
	}
	edge, err := NewPayload(res.EdgeScript.Format, res.EdgeScript.UserData)
	if err != nil {
		return nil, err
	}
	out.SetEdgeScript(edge)
	return out, nil
}

// newPreview is the output of a preview: the view's config unpacked, the
// payloads' sizes and digests.
func newPreview(profile osm.ProfileReference, cfg *osm.OperatingSystemConfigSpec, res *render.Result) *Rendered {
	if cfg == nil {
		cfg = &osm.OperatingSystemConfigSpec{CloudProvider: osm.CloudProviderSpec{Name: res.Config.CloudProvider.Name}}
	}
	out := &Rendered{Profile: profile, body: &body{unpacked: cfg},
		Bootstrap: digest(res.Bootstrap), Provisioning: digest(res.Provisioning)}
	out.summarize(cfg)
	if res.EdgeScript != nil {
		out.EdgeScript = digest(*res.EdgeScript)
	}
	return out
}

// digest is a payload's size and digest, without its user-data.
func digest(p render.Payload) Payload {
	sum := sha256.Sum256(p.UserData)
	return Payload{Format: p.Format, Size: int64(len(p.UserData)), SHA256: hex.EncodeToString(sum[:])}
}

// Forget drops what the resolver remembers about a deleted MD.
func (r *Resolver) Forget(uid types.UID) {
	r.hashes.Remove(uid)
	r.cache.Forget(uid)
}

// requestedSpec is the config of an MD whose render failed or is pending: the
// operating system its profile is for.
func requestedSpec(osp *ospv1alpha1.OperatingSystemProfile) *osm.OperatingSystemConfigSpec {
	return &osm.OperatingSystemConfigSpec{OSName: string(osp.Spec.OSName), OSVersion: osp.Spec.OSVersion}
}

// runPreview runs render in one of the previews' slots, once one is free;
// when ctx ends first (the client went away), it renders nothing.
func (r *Resolver) runPreview(ctx context.Context, profile osm.ProfileReference, render func() *Rendered) *Rendered {
	select {
	case r.previews <- struct{}{}:
	default:
		metrics.ReviewRendersWaiting.Inc()
		select {
		case r.previews <- struct{}{}:
			metrics.ReviewRendersWaiting.Dec()
		case <-ctx.Done():
			metrics.ReviewRendersWaiting.Dec()
			metrics.ReviewRenders.WithLabelValues("canceled").Inc()
			return &Rendered{Profile: profile, Err: fmt.Errorf("not rendered: %w", ctx.Err())}
		}
	}
	defer func() { <-r.previews }()
	if err := ctx.Err(); err != nil {
		metrics.ReviewRenders.WithLabelValues("canceled").Inc()
		return &Rendered{Profile: profile, Err: fmt.Errorf("not rendered: %w", err)}
	}
	out := render()
	result := "success"
	if out.Err != nil {
		result = "error"
	}
	metrics.ReviewRenders.WithLabelValues(result).Inc()
	return out
}
