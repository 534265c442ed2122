// Package migrate takes a cluster over from upstream operating-system-manager
// (github.com/kubermatic/operating-system-manager) without touching a node:
// Find reads what upstream left, NewPlan orders what to do about it (and what
// must wait), Apply does it, idempotently. `osm-apiserver migrate` prints the
// plan and, with --apply, applies it; docs/migrating.md is the procedure.
//
// The Secrets machine-controller reads are taken over by osm-apiserver's
// syncer, which overwrites a Secret without our labels with the same revision
// annotation: machine-controller recreates no Machine. What migrate removes of
// upstream's — its finalizer on MachineDeployments, the credentials upstream's
// payloads hand to nodes — waits until nothing needs it any more.
package migrate

import (
	"net/url"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// What upstream OSM writes, by the names its manifests and controllers use.
const (
	// Group is the API group of upstream's CRDs; OperatingSystemProfiles of
	// that group are ours too (the same schema), OperatingSystemConfigs not.
	Group = "operatingsystemmanager.k8c.io"
	// OSCCRD is upstream's OperatingSystemConfig CRD: its short name osc is
	// the short name of our operatingsystemconfigs too.
	OSCCRD = "operatingsystemconfigs." + Group
	// Finalizer is what upstream puts on every MachineDeployment it renders
	// for, to delete its OSC and Secrets; osm-apiserver cleans up by label.
	Finalizer = "kubermatic.io/cleanup-operating-system-configs"
	// GetterName names the ServiceAccount, Role and RoleBinding in
	// cloud-init-settings of the token every upstream bootstrap payload holds;
	// the Role lets it read every Secret there.
	GetterName = "cloud-init-getter"
	// GetterTokenSecret is the legacy token Secret of GetterName.
	GetterTokenSecret = "cloud-init-getter-token"
	// ControllerLease and WorkerLease are the leader election Leases of
	// upstream's controller (in its namespace, and in kube-system of the
	// worker cluster when it has one).
	ControllerLease = "operating-system-manager"
	WorkerLease     = "operating-system-manager-worker-manager"
	// BootstrapTokenLabel on upstream's kubelet bootstrap tokens in
	// kube-system holds "<namespace>-<name>" of the MD (or the name alone when
	// that is 63 characters or longer).
	BootstrapTokenLabel = "machinedeployment.k8s.io/name"
	// webhookPrefix starts the name of the Service (or the host of the URL)
	// that serves upstream's webhooks, in upstream's and in KKP's manifests.
	webhookPrefix = "operating-system-manager"
)

var (
	// OSCResource is upstream's OperatingSystemConfig resource.
	OSCResource = schema.GroupVersionResource{Group: Group, Version: "v1alpha1", Resource: "operatingsystemconfigs"}
	// CRDResource is the CustomResourceDefinition resource.
	CRDResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	// MachineDeploymentResource and MachineResource are machine-controller's.
	MachineDeploymentResource = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinedeployments"}
	MachineResource           = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machines"}
)

// UpstreamKey is what upstream names an MD's kubelet bootstrap kubeconfig
// Secret and labels its bootstrap token with: "<namespace>-<name>", or the
// name alone when that is 63 characters or longer.
func UpstreamKey(ref machinecontroller.Ref) string {
	if key := ref.Namespace + "-" + ref.Name; len(key) < 63 {
		return key
	}
	return ref.Name
}

// KubeletBootstrapSecretName is upstream's kubelet bootstrap kubeconfig
// Secret of an MD in cloud-init-settings.
func KubeletBootstrapSecretName(ref machinecontroller.Ref) string {
	return UpstreamKey(ref) + "-kubelet-bootstrap-config"
}

// IsUpstreamWebhook says whether upstream's webhook server serves a webhook:
// its Service's name or its URL's host starts with operating-system-manager.
func IsUpstreamWebhook(c admissionregistrationv1.WebhookClientConfig) bool {
	if c.Service != nil {
		return strings.HasPrefix(c.Service.Name, webhookPrefix)
	}
	if c.URL != nil {
		u, err := url.Parse(*c.URL)
		return err == nil && strings.HasPrefix(u.Hostname(), webhookPrefix)
	}
	return false
}

// WebhookConfiguration is a webhook configuration that holds upstream's
// webhooks.
type WebhookConfiguration struct {
	// Kind is ValidatingWebhookConfiguration or MutatingWebhookConfiguration.
	Kind, Name string
	// Others are its webhooks that are not upstream's: a configuration with
	// some is not deleted.
	Others []string
	// Worker says it is in the worker cluster (when that is another one).
	Worker bool
}

func (w WebhookConfiguration) String() string {
	if w.Worker {
		return w.Kind + " " + w.Name + " (worker cluster)"
	}
	return w.Kind + " " + w.Name
}

// classify returns the configuration if any of its webhooks is upstream's.
func classify(kind, name string, webhooks map[string]admissionregistrationv1.WebhookClientConfig) (WebhookConfiguration, bool) {
	w := WebhookConfiguration{Kind: kind, Name: name}
	found := false
	for webhook, c := range webhooks {
		if IsUpstreamWebhook(c) {
			found = true
		} else {
			w.Others = append(w.Others, webhook)
		}
	}
	slices.Sort(w.Others)
	return w, found
}
