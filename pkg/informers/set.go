package informers

import (
	"context"
	"slices"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// Clients are what a Set lists and watches with.
type Clients struct {
	// Profiles reads profiles and overlays (management cluster).
	Profiles versioned.Interface
	// Worker reads our tokens and payload Secrets (worker cluster).
	Worker kubernetes.Interface
	// Metadata reads the boot reports' metadata (worker cluster).
	Metadata metadata.Interface
	// The worker cluster's machine-controller objects and Nodes: see
	// MachineDeploymentListWatch and its siblings.
	MachineDeployments, MachineSets, Machines, Nodes cache.ListerWatcher
}

// Wrap wraps a list-watch; the API makes each informer it renders from a
// stream of its change feed (pkg/changefeed), which gives its resourceVersions.
type Wrap = func(cache.ListerWatcher) cache.ListerWatcher

// Streams wrap the list-watch of each informer the API renders from; nil
// leaves one as it is. Machines and Nodes are no input of a render.
type Streams struct {
	MachineDeployments, MachineSets, Profiles, Overlays Wrap
	// Tokens are the kubelet bootstrap tokens, FetchTokens the fetch tokens.
	Tokens, FetchTokens, Payloads, BootReports Wrap
}

// Set is every informer that every replica runs, whoever leads.
type Set struct {
	// MachineDeployments, MachineSets, Machines and Nodes (metadata only) of
	// the worker cluster, with the indexes of pkg/machines.
	MachineDeployments, MachineSets, Machines, Nodes cache.SharedIndexInformer
	// Profiles and Overlays of the management cluster.
	Profiles, Overlays cache.SharedIndexInformer
	// Tokens are our kubelet bootstrap and fetch tokens.
	Tokens *tokens.Informer
	// Payloads are the Secrets the syncer writes.
	Payloads *Payloads
	// BootReports are the metadata of the machines' boot reports.
	BootReports *bootreports.Informer
}

// New returns the Set of c. MDs that name no profile namespace use
// profileNamespace's (the MachineDeployments' profile index).
func New(c Clients, profileNamespace string, s Streams) *Set {
	return &Set{
		MachineDeployments: NewMachineDeployments(wrap(c.MachineDeployments, s.MachineDeployments), profileNamespace),
		MachineSets:        NewMachineSets(wrap(c.MachineSets, s.MachineSets)),
		Machines:           NewMachines(c.Machines),
		Nodes:              NewNodes(c.Nodes),
		Profiles:           NewProfiles(c.Profiles, s.Profiles),
		Overlays:           NewOverlays(c.Profiles, s.Overlays),
		Tokens:             NewTokens(c.Worker, s.Tokens, s.FetchTokens),
		Payloads:           NewPayloads(c.Worker, s.Payloads),
		BootReports:        NewBootReports(c.Metadata, s.BootReports),
	}
}

// informers are every informer of the Set.
func (s *Set) informers() []cache.SharedIndexInformer {
	return []cache.SharedIndexInformer{
		s.MachineDeployments, s.MachineSets, s.Machines, s.Nodes, s.Profiles, s.Overlays,
		s.Tokens.Informer(), s.Tokens.FetchInformer(), s.Payloads.Informer(), s.BootReports.Informer(),
	}
}

// synced are the Set's informers by the name readyz reports.
func (s *Set) synced() []namedSynced {
	return []namedSynced{
		{"machinedeployments", s.MachineDeployments.HasSynced},
		{"machinesets", s.MachineSets.HasSynced},
		{"machines", s.Machines.HasSynced},
		{"nodes", s.Nodes.HasSynced},
		{"operatingsystemprofiles", s.Profiles.HasSynced},
		{"operatingsystemprofileoverlays", s.Overlays.HasSynced},
		{"tokens", s.Tokens.HasSynced}, // kubelet bootstrap and fetch tokens
		{"payload-secrets", s.Payloads.HasSynced},
		{"boot-reports", s.BootReports.HasSynced},
	}
}

type namedSynced struct {
	name   string
	synced cache.InformerSynced
}

// Start runs every informer until ctx ends.
func (s *Set) Start(ctx context.Context) {
	for _, i := range s.informers() {
		go i.RunWithContext(ctx)
	}
}

// Synced says whether every informer has listed once: before that a read
// answers from an empty cache, as if there were no MDs, and a MachineJoin
// could be answered from a profile or overlay not listed yet.
func (s *Set) Synced() bool {
	return len(s.Unsynced()) == 0
}

// Unsynced names the informers that have not listed yet, sorted.
func (s *Set) Unsynced() []string {
	var names []string
	for _, n := range s.synced() {
		if !n.synced() {
			names = append(names, n.name)
		}
	}
	slices.Sort(names)
	return names
}

func wrap(lw cache.ListerWatcher, w Wrap) cache.ListerWatcher {
	if w == nil {
		return lw
	}
	return w(lw)
}
