package migrate

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Clients reach the management cluster (profiles, the APIService, upstream's
// OperatingSystemConfigs and its controller's Lease) and the worker cluster
// (MachineDeployments, Machines, Secrets, tokens); one cluster unless
// osm-apiserver runs with --worker-cluster-kubeconfig.
type Clients struct {
	Management, Worker               kubernetes.Interface
	ManagementDynamic, WorkerDynamic dynamic.Interface
	// OSM reads OperatingSystemProfiles and our OperatingSystemConfigs
	// (management cluster).
	OSM versioned.Interface
	// Separate says the worker cluster is not the management cluster.
	Separate bool
}

// State is what Find found of upstream OSM, and of osm-apiserver taking over.
type State struct {
	// Running names upstream controllers' Leases renewed lately: upstream
	// still renders, and would delete the Secrets osm-apiserver takes over.
	Running []string
	// Serving is false, with the reason in NotServing, when osm-apiserver
	// does not answer through its APIService.
	Serving    bool
	NotServing string
	// OSPCRDUpstream says the OperatingSystemProfile CRD is upstream's: ours
	// adds the rule that keeps profiles immutable without a new version.
	OSPCRDUpstream bool
	// OSCCRD says upstream's OperatingSystemConfig CRD is installed; OSCs
	// are its objects ("namespace/name").
	OSCCRD bool
	OSCs   []string
	// Webhooks are the webhook configurations with upstream's webhooks.
	Webhooks []WebhookConfiguration
	// Getter are the objects of upstream's getter token that exist.
	Getter []Object
	// Skipped are objects with upstream's names that are not upstream's:
	// migrate leaves them alone.
	Skipped []Skip
	// MachineDeployments are all of them, by namespace and name.
	MachineDeployments []MachineDeployment
	// Machines says whether the cluster serves Machines; Joining names those
	// without a Node yet: a VM created from upstream's payloads may still
	// need upstream's credentials to join.
	Machines bool
	Joining  []string
	// Profiles are the OperatingSystemProfiles, by namespace and name.
	Profiles []Profile
}

// MachineDeployment is one MD as the migration sees it.
type MachineDeployment struct {
	Ref      machinecontroller.Ref
	Revision string
	Deleting bool
	// Finalizer says it has upstream's finalizer.
	Finalizer bool
	// Profile is the profile it renders from; ProfileErr why it has none.
	Profile    machinecontroller.Profile
	ProfileErr string
	// Secrets are its payload Secrets, bootstrap and provisioning.
	Secrets [2]Secret
	// Leftovers are upstream's node credentials for it that exist: its
	// kubelet bootstrap kubeconfig Secret and bootstrap tokens, and its
	// provisioning Secret when its nodes join through a MachineJoin.
	Leftovers []Object
	// Skipped are Secrets of its upstream names that are not upstream's.
	Skipped []Skip
	// Join is how its nodes join, as its OperatingSystemConfig says; empty
	// when osm-apiserver does not answer or does not know yet.
	Join osm.NodeJoinMode
	// Output is what our OperatingSystemConfig says when it is not
	// rendered (its error or what it waits for).
	Output string
}

// Secret is one payload Secret of an MD.
type Secret struct {
	Kind osm.PayloadType
	Name string
	// Exists, Ours (labelled for this MD), Revision: its revision annotation.
	Exists, Ours bool
	Revision     string
	// UID is the Secret's; NotUpstream says why it is not upstream's either
	// (another MD's of osm-apiserver, a user's): it is never deleted.
	UID         types.UID
	NotUpstream string
	// Unneeded says osm-apiserver writes no such Secret for the MD: the
	// provisioning Secret of an MD whose nodes join through a MachineJoin,
	// which get their provisioning payload in its answer.
	Unneeded bool
}

// Object is an object to delete, in the worker cluster unless Management.
// UID, when set, is the one Find read: Apply deletes nothing else.
type Object struct {
	Kind, Namespace, Name string
	Management            bool
	UID                   types.UID
}

func (o Object) String() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// Profile is an OperatingSystemProfile and the MDs that render from it.
type Profile struct {
	Namespace, Name, Version string
	// Ours says osm-apiserver installed it (its managed-by label).
	Ours bool
	// Default says it has the name of one of osm-apiserver's default
	// profiles, in its namespace: upstream's default, most likely.
	Default bool
	Users   []machinecontroller.Ref
}

// leaseGrace is how long after its lease ran out a controller counts as
// running: a leader renews every few seconds.
const leaseGrace = 30 * time.Second
