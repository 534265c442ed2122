package migrate

import (
	"context"
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
)

// WebhookConfigurations returns the webhook configurations of client's
// cluster that hold upstream's webhooks, validating ones first, by name.
func WebhookConfigurations(ctx context.Context, client kubernetes.Interface) ([]WebhookConfiguration, error) {
	var out []WebhookConfiguration
	validating, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to list validatingwebhookconfigurations: %w", err)
	}
	for _, c := range validating.Items {
		webhooks := map[string]admissionregistrationv1.WebhookClientConfig{}
		for _, w := range c.Webhooks {
			webhooks[w.Name] = w.ClientConfig
		}
		if w, ok := classify("ValidatingWebhookConfiguration", c.Name, webhooks); ok {
			out = append(out, w)
		}
	}
	mutating, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to list mutatingwebhookconfigurations: %w", err)
	}
	for _, c := range mutating.Items {
		webhooks := map[string]admissionregistrationv1.WebhookClientConfig{}
		for _, w := range c.Webhooks {
			webhooks[w.Name] = w.ClientConfig
		}
		if w, ok := classify("MutatingWebhookConfiguration", c.Name, webhooks); ok {
			out = append(out, w)
		}
	}
	return out, nil
}

// OSCServed says whether the cluster serves upstream's operatingsystemconfigs,
// which `kubectl get osc` may then mean instead of ours. Discovery needs no
// permission beyond what every client has.
func OSCServed(client discovery.DiscoveryInterface) (bool, error) {
	list, err := client.ServerResourcesForGroupVersion(OSCResource.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("failed to discover %s: %w", OSCResource.GroupVersion(), err)
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == OSCResource.Resource }), nil
}

// Installed returns what of upstream OSM makes `kubectl get osc` ambiguous or
// still acts on MachineDeployments: its OperatingSystemConfig CRD (in the
// management cluster, beside our APIService) and its webhook configurations
// (in the management cluster and, when it is another, the worker cluster:
// nil otherwise). Empty when none is left.
func Installed(ctx context.Context, management, worker kubernetes.Interface) ([]string, error) {
	var found []string
	served, err := OSCServed(management.Discovery())
	if err != nil {
		return nil, err
	}
	if served {
		found = append(found, "CustomResourceDefinition "+OSCCRD)
	}
	for _, c := range []kubernetes.Interface{management, worker} {
		if c == nil {
			continue
		}
		webhooks, err := WebhookConfigurations(ctx, c)
		if err != nil {
			return nil, err
		}
		for _, w := range webhooks {
			w.Worker = c == worker
			found = append(found, w.String())
		}
	}
	return found, nil
}
