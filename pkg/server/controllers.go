package server

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/defaultosps"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/bootreport"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/machinejoin"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/operatingsystemconfig"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/profilereview"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/provisioningpayload"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/syncer"
)

// storages are the REST storages of osm.k8c.io, served from the inputs.
// Step records of boot reports record Warning Events through events.
func (in *inputs) storages(cfg Config, authz authorizer.Authorizer, events record.EventBroadcaster) registry.Storages {
	set, cl := in.informers, cfg.Clusters
	exchange := &nodejoin.Exchange{
		Callers:            in.tokens,
		MachineDeployments: in.mds,
		Machines:           in.machines,
		Resolver:           in.resolver,
		Facts:              in.facts,
		Issuer:             &nodejoin.Issuer{Client: cl.Worker, TTL: cfg.MachineJoin.CredentialTTL, RetryWindow: cfg.MachineJoin.RetryWindow},
		// A join right after a restart is not answered from a profile or
		// overlay the server has not listed yet.
		Synced: set.Synced,
	}
	return registry.Storages{
		Configs:      operatingsystemconfig.NewREST(in.mds, in.resolver, in.feed, set.BootReports),
		Payloads:     provisioningpayload.NewREST(in.mds, in.resolver, in.feed),
		MachineJoins: machinejoin.NewREST(exchange),
		ProfileReviews: profilereview.NewREST(profilereview.Config{
			ProfileNamespace: cfg.ProfileNamespace, MachineDeployments: in.mds, Resolver: in.resolver, Overlays: in.selector,
			Authorizer: authz, Feed: in.feed,
		}),
		BootReports: bootreport.NewREST(cl.Worker.CoreV1().Secrets(bootreports.Namespace)),
		BootReportSteps: bootreport.NewStepREST(bootreport.StepConfig{
			Secrets:            cl.Reports.CoreV1().Secrets(bootreports.Namespace),
			Caller:             in.tokens.CallerMachineDeployment,
			MachineDeployments: in.mds,
			Machines:           in.machines,
			Known:              in.knownCredentials,
			Answers:            nodejoin.NewAnswers(cl.Worker),
			Recorder:           events.NewRecorder(eventScheme, corev1.EventSource{Component: "osm-apiserver"}),
		}),
	}
}

// knownCredentials are the credentials the server knows for an MD, of which
// its log tails are scrubbed: its tokens and the registry credentials of the
// current facts (none before the facts are known).
func (in *inputs) knownCredentials(ref machinecontroller.Ref) []string {
	kubelet, fetch := in.tokens.TokensOf(ref)
	var registries map[string]render.RegistryAuth
	if f := in.facts.Current(); f != nil {
		registries = f.Node.RegistryCredentials
	}
	return bootreport.KnownValues(kubelet, fetch, registries)
}

// eventScheme of the API's Events: they are recorded against hand-built
// references to MachineDeployments, so it needs no types.
var eventScheme = runtime.NewScheme()

// recordEvents sends the API's Events (Warnings of failed boot steps, from
// whichever replica took the record) to the worker cluster until ctx ends.
func recordEvents(ctx context.Context, events record.EventBroadcaster, client kubernetes.Interface) {
	events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	go func() {
		<-ctx.Done()
		events.Shutdown()
	}()
}

// leaderControllers are the controllers only the leader runs, each built
// anew for every leadership term: the syncer (which also collects old boot
// reports), the machine join controller (CSR approver and credential
// cleanup) and, unless disabled, the installer of the default profiles.
func (in *inputs) leaderControllers(cfg Config) ([]leaderController, error) {
	set, cl := in.informers, cfg.Clusters
	syncerConfig := syncer.Config{
		Client:             cl.Worker,
		MachineDeployments: set.MachineDeployments,
		MachineSets:        set.MachineSets,
		Machines:           in.machines,
		MachineInformer:    set.Machines,
		Profiles:           set.Profiles,
		Overlays:           set.Overlays,
		OverlayClient:      cl.Profiles.OverlaysV1alpha1(),
		OverlaySelector:    in.selector,
		Tokens:             set.Tokens,
		Payloads:           set.Payloads,
		BootReports:        set.BootReports,
		BootReportTTL:      cfg.Syncer.BootReportTTL,
		Nodes:              set.Nodes,
		Resolver:           in.resolver,
		Facts:              in.facts,
		Refresh:            in.refresh,
		ProfileNamespace:   cfg.ProfileNamespace,
		TokenTTL:           cfg.Syncer.TokenTTL,
		TokenRenewBefore:   cfg.Syncer.TokenRenewBefore,
		Workers:            cfg.Syncer.Workers,
		ResyncPeriod:       cfg.Syncer.ResyncPeriod,
	}
	joinConfig := nodejoin.ControllerConfig{
		Client: cl.Worker, Machines: in.machines, MachineInformer: set.Machines, NodeInformer: set.Nodes, TTL: cfg.MachineJoin.CredentialTTL,
	}
	controllers := []leaderController{
		{name: "syncer", run: func(ctx context.Context) error {
			c, err := syncer.New(syncerConfig)
			if err != nil {
				return err
			}
			return c.Run(ctx)
		}},
		{name: "machine-join", run: func(ctx context.Context) error { return nodejoin.NewController(joinConfig).Run(ctx) }},
	}
	if !cfg.InstallDefaultOSPs {
		return controllers, nil
	}
	installer, err := defaultosps.NewInstaller(cl.Profiles.OperatingsystemmanagerV1alpha1(), cfg.ProfileNamespace)
	if err != nil {
		return nil, err
	}
	return append(controllers, leaderController{name: "default-profiles", run: func(ctx context.Context) error {
		installer.Run(ctx)
		return nil
	}}), nil
}

// newUpstreamCheck watches both clusters for a running upstream OSM.
func newUpstreamCheck(cl Clusters) *upstreamCheck {
	u := &upstreamCheck{management: cl.Management}
	if cl.Separate {
		u.worker = cl.Worker
	}
	return u
}
