package server

import (
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed"
	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	osplisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/operatingsystemmanager/v1alpha1"
	overlaylisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/overlays"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// streams are the informers the API renders from, as streams of the change
// feed. Their order is part of every resourceVersion: change it and
// positions issued before are refused as too old.
type streams struct {
	machineDeployments, machineSets, tokens, profiles, payloads, fetchTokens, overlays, bootReports *changefeed.Stream
}

func newStreams(feed *changefeed.Feed) streams {
	return streams{
		machineDeployments: feed.AddStream("machinedeployments"),
		machineSets:        feed.AddStream("machinesets"),
		tokens:             feed.AddStream("tokens"),
		profiles:           feed.AddStream("operatingsystemprofiles"),
		// Their owner labels decide which MD has the Secret names several share.
		payloads:    feed.AddStream("payload-secrets"),
		fetchTokens: feed.AddStream("fetch-tokens"),
		overlays:    feed.AddStream("operatingsystemprofileoverlays"),
		// The OSCs' machine summaries count them.
		bootReports: feed.AddStream("boot-reports"),
	}
}

// wraps make each informer the API renders from a stream of the feed.
func (s streams) wraps() informers.Streams {
	return informers.Streams{
		MachineDeployments: s.machineDeployments.Wrap, MachineSets: s.machineSets.Wrap,
		Profiles: s.profiles.Wrap, Overlays: s.overlays.Wrap,
		Tokens: s.tokens.Wrap, FetchTokens: s.fetchTokens.Wrap,
		Payloads: s.payloads.Wrap, BootReports: s.bootReports.Wrap,
	}
}

// inputs are what every replica renders from: the informers, the cluster
// facts, the readers over them and the resolver with its render cache, and
// the change feed that tells API watchers of every change.
type inputs struct {
	informers *informers.Set
	facts     *facts.Source
	feed      *changefeed.Feed
	streams   streams
	mds       machines.Lister
	machines  *machines.MachineReader
	selector  *overlays.Selector
	// tokens reads the MDs' tokens: renders embed them, MachineJoins and
	// step records are authenticated as their fetch tokens.
	tokens   *tokens.Source
	resolver *resolve.Resolver
	// refresh re-syncs every MD when the facts change.
	refresh chan struct{}
}

func newInputs(cfg Config) (*inputs, error) {
	factsSource, err := facts.NewSource(cfg.Facts)
	if err != nil {
		return nil, err
	}
	cl := cfg.Clusters
	// Every informer the API renders from is a stream of the feed, which
	// gives the API's resourceVersions: see pkg/changefeed.
	feed := changefeed.New(cfg.WatchHistory, func() string { return factsVersion(factsSource) })
	in := &inputs{facts: factsSource, feed: feed, streams: newStreams(feed), refresh: make(chan struct{}, 1)}
	in.informers = informers.New(informers.Clients{
		Profiles: cl.Profiles, Worker: cl.Worker, Metadata: cl.Metadata,
		MachineDeployments: cl.MachineDeployments, MachineSets: cl.MachineSets, Machines: cl.Machines, Nodes: cl.Nodes,
	}, cfg.ProfileNamespace, in.streams.wraps())
	set := in.informers
	in.mds = machines.NewLister(set.MachineDeployments.GetIndexer())
	in.machines = machines.NewMachineReader(set.Machines.GetIndexer(), set.MachineSets.GetIndexer(), set.Nodes.GetIndexer())
	in.selector = &overlays.Selector{
		ServerNamespace: cfg.ProfileNamespace,
		Overlays:        overlaylisters.NewOperatingSystemProfileOverlayLister(set.Overlays.GetIndexer()),
	}
	in.tokens = tokens.NewSource(set.Tokens)
	in.resolver = resolve.New(resolve.Config{
		ProfileNamespace:   cfg.ProfileNamespace,
		Profiles:           osplisters.NewOperatingSystemProfileLister(set.Profiles.GetIndexer()),
		Facts:              factsSource,
		Tokens:             in.tokens,
		Claims:             &machines.Claims{MachineDeployments: in.mds, Secrets: set.Payloads.Lister()},
		Revisions:          machines.NewRevisionTemplates(set.MachineSets.GetIndexer()),
		Overlays:           in.selector,
		Render:             cfg.Render,
		CacheBytes:         cfg.RenderCacheBytes,
		ConcurrentRenders:  cfg.ConcurrentRenders,
		ConcurrentPreviews: cfg.ConcurrentPreviews,
	})
	return in, nil
}

// publishChanges tells API watchers of every change of an output's inputs:
// MDs, their MachineSets, the profiles they name, the overlays that apply to
// them, their tokens, the payload
// Secrets whose owners decide shared names, and the shared facts (which also
// re-sync every MD through refresh).
func (in *inputs) publishChanges() error {
	claimsOnMDs, claimsOnSecrets := changefeed.Claims(in.mds)
	set := in.informers
	if _, err := set.MachineDeployments.AddEventHandler(in.streams.machineDeployments.Handler(
		changefeed.Combine(changefeed.MachineDeployments(), claimsOnMDs))); err != nil {
		return err
	}
	if _, err := set.Payloads.Informer().AddEventHandler(in.streams.payloads.Handler(claimsOnSecrets)); err != nil {
		return err
	}
	if _, err := set.MachineDeployments.AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if md, ok := obj.(*clusterv1alpha1.MachineDeployment); ok {
				in.resolver.Forget(md.UID)
			}
		},
	}); err != nil {
		return err
	}
	if _, err := set.Profiles.AddEventHandler(in.streams.profiles.Handler(changefeed.Profiles(in.mds))); err != nil {
		return err
	}
	if _, err := set.MachineSets.AddEventHandler(in.streams.machineSets.Handler(changefeed.MachineSets(in.mds))); err != nil {
		return err
	}
	if err := in.publishOverlays(); err != nil {
		return err
	}
	if _, err := set.Tokens.Informer().AddEventHandler(in.streams.tokens.Handler(tokenChanges(in.mds))); err != nil {
		return err
	}
	if _, err := set.Tokens.FetchInformer().AddEventHandler(in.streams.fetchTokens.Handler(tokenChanges(in.mds))); err != nil {
		return err
	}
	if _, err := set.BootReports.Informer().AddEventHandler(in.streams.bootReports.Handler(
		changefeed.MachineReports(in.mds, bootreports.SummaryChanged))); err != nil {
		return err
	}
	publishFacts := func() {
		users, err := changefeed.ProfileUsers(in.mds)
		if err != nil {
			klog.ErrorS(err, "Failed to tell watchers that every MachineDeployment changed")
		}
		in.feed.PublishFacts(factsVersion(in.facts), users)
	}
	// The first facts too: every output was pending until then.
	in.facts.OnReady(publishFacts)
	// Or the first attempt found none: positions may be issued, with noFacts.
	in.facts.OnFirstFailure(in.feed.Wake)
	in.facts.OnChange(func() {
		publishFacts()
		select {
		case in.refresh <- struct{}{}:
		default: // one pending signal re-syncs everything already
		}
	})
	return nil
}

// noFacts is the facts part of watch positions while the facts cannot be
// read (every output is pending, and says why): a real version has 12 hex
// digits.
const noFacts = "0"

// factsVersion is the facts part of watch positions: "" (no position yet,
// the feed waits) until the facts' informers have synced. A replica whose
// facts informers sync after its streams would otherwise issue positions
// with noFacts that every other replica refuses as too old.
func factsVersion(s *facts.Source) string {
	if f := s.Current(); f != nil {
		return f.Version()
	}
	if !s.Settled() {
		return ""
	}
	return noFacts
}

// tokenChanges are the changes of a token informer: the MD whose tokens were
// created, changed in value or deleted (its payloads embed them). Extending a
// token changes only its expiration.
func tokenChanges(mds machines.Lister) changefeed.Changes {
	return changefeed.Owned(mds, tokens.ValueChanged)
}

// publishOverlays tells API watchers of the MDs an overlay selected or
// selects when it changes.
func (in *inputs) publishOverlays() error {
	_, err := in.informers.Overlays.AddEventHandler(in.streams.overlays.Handler(changefeed.Overlays(
		func(o *overlaysv1alpha1.OperatingSystemProfileOverlay) ([]*clusterv1alpha1.MachineDeployment, error) {
			return in.selector.MachineDeployments(o, in.mds)
		})))
	return err
}
