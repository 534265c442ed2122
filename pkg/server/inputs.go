package server

import (
	"context"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed"
	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	"github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
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

// newProfileInformer returns the informer of OperatingSystemProfiles, whose
// lists and watches stream sees.
func newProfileInformer(client versioned.Interface, stream *changefeed.Stream) cache.SharedIndexInformer {
	profiles := func(namespace string) interface {
		List(context.Context, metav1.ListOptions) (*ospv1alpha1.OperatingSystemProfileList, error)
		Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
	} {
		return client.OperatingsystemmanagerV1alpha1().OperatingSystemProfiles(namespace)
	}
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return profiles(metav1.NamespaceAll).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return profiles(metav1.NamespaceAll).Watch(ctx, o)
		},
	}, client)
	i := cache.NewSharedIndexInformer(stream.Wrap(lw), &ospv1alpha1.OperatingSystemProfile{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	// Setting a transform on an informer that has not started cannot fail.
	_ = i.SetTransform(machinecontroller.StripManagedFields)
	return i
}

// apiInputs are the informers and facts the API's outputs are rendered from.
type apiInputs struct {
	streams     streams
	mds         machines.Lister
	resolver    *resolve.Resolver
	factsSource *facts.Source
	// refresh re-syncs every MD when the facts change.
	refresh chan struct{}

	machineDeployments, machineSets, profiles, payloads, overlays, bootReports cache.SharedIndexInformer
	tokens                                                                     *tokens.Informer
	selector                                                                   *overlays.Selector
	// machines and nodes are read by the MachineJoin exchange and the boot
	// reports' step records.
	machines, nodes cache.SharedIndexInformer
}

// joinSynced says whether every informer the MachineJoin exchange reads has
// listed: its own, and the render's (the answer carries the provisioning
// payload), so a join right after a restart is not answered from a profile
// or overlay the server has not listed yet.
func (in apiInputs) joinSynced() bool {
	return in.machines.HasSynced() && in.nodes.HasSynced() && in.machineSets.HasSynced() &&
		in.machineDeployments.HasSynced() && in.tokens.HasSynced() &&
		in.profiles.HasSynced() && in.overlays.HasSynced() && in.payloads.HasSynced()
}

// publishChanges tells API watchers of every change of an output's inputs:
// MDs, their MachineSets, the profiles they name, the overlays that apply to
// them, their tokens, the payload
// Secrets whose owners decide shared names, and the shared facts (which also
// re-sync every MD through refresh).
func (in apiInputs) publishChanges(feed *changefeed.Feed) error {
	claimsOnMDs, claimsOnSecrets := changefeed.Claims(in.mds)
	if _, err := in.machineDeployments.AddEventHandler(in.streams.machineDeployments.Handler(
		changefeed.Combine(changefeed.MachineDeployments(), claimsOnMDs))); err != nil {
		return err
	}
	if _, err := in.payloads.AddEventHandler(in.streams.payloads.Handler(claimsOnSecrets)); err != nil {
		return err
	}
	if _, err := in.machineDeployments.AddEventHandler(cache.ResourceEventHandlerFuncs{
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
	if _, err := in.profiles.AddEventHandler(in.streams.profiles.Handler(changefeed.Profiles(in.mds))); err != nil {
		return err
	}
	if _, err := in.machineSets.AddEventHandler(in.streams.machineSets.Handler(changefeed.MachineSets(in.mds))); err != nil {
		return err
	}
	if err := in.publishOverlays(); err != nil {
		return err
	}
	if _, err := in.tokens.Informer().AddEventHandler(in.streams.tokens.Handler(tokenChanges(in.mds))); err != nil {
		return err
	}
	if _, err := in.tokens.FetchInformer().AddEventHandler(in.streams.fetchTokens.Handler(tokenChanges(in.mds))); err != nil {
		return err
	}
	if _, err := in.bootReports.AddEventHandler(in.streams.bootReports.Handler(
		changefeed.MachineReports(in.mds, bootreports.SummaryChanged))); err != nil {
		return err
	}
	publishFacts := func() {
		users, err := changefeed.ProfileUsers(in.mds)
		if err != nil {
			klog.ErrorS(err, "Failed to tell watchers that every MachineDeployment changed")
		}
		feed.PublishFacts(factsVersion(in.factsSource), users)
	}
	// The first facts too: every output was pending until then.
	in.factsSource.OnReady(publishFacts)
	// Or the first attempt found none: positions may be issued, with noFacts.
	in.factsSource.OnFirstFailure(feed.Wake)
	in.factsSource.OnChange(func() {
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
