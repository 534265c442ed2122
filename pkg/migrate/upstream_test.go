package migrate

import (
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

func TestIsUpstreamWebhook(t *testing.T) {
	service := func(name string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "kube-system", Name: name}}
	}
	url := func(u string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: &u}
	}
	tests := []struct {
		name   string
		config admissionregistrationv1.WebhookClientConfig
		want   bool
	}{
		{"upstream's Service", service("operating-system-manager-webhook"), true},
		{"KKP's URL", url("https://operating-system-manager-webhook.cluster-x.svc.cluster.local./mutate-v1alpha1-machinedeployment"), true},
		{"machine-controller's", service("machine-controller-webhook"), false},
		{"a URL elsewhere", url("https://example.com/operating-system-manager"), false},
		{"neither", admissionregistrationv1.WebhookClientConfig{}, false},
	}
	for _, tc := range tests {
		if got := IsUpstreamWebhook(tc.config); got != tc.want {
			t.Errorf("%s: IsUpstreamWebhook = %v, want %v", tc.name, got, tc.want)
		}
	}
	w, ok := classify("MutatingWebhookConfiguration", "mixed", map[string]admissionregistrationv1.WebhookClientConfig{
		"osm": service("operating-system-manager-webhook"), "z": service("other"), "a": service("another"),
	})
	if !ok || !slices.Equal(w.Others, []string{"a", "z"}) {
		t.Errorf("classify = %+v, %v; want upstream's, with others a and z", w, ok)
	}
}

func TestUpstreamKey(t *testing.T) {
	short := machinecontroller.Ref{Namespace: "team", Name: "pool"}
	if got := KubeletBootstrapSecretName(short); got != "team-pool-kubelet-bootstrap-config" {
		t.Errorf("KubeletBootstrapSecretName = %q", got)
	}
	long := machinecontroller.Ref{Namespace: "a-namespace-of-thirty-two-chars0", Name: "and-a-name-of-thirty-chars-012"}
	if got := UpstreamKey(long); got != long.Name {
		t.Errorf("UpstreamKey of a 63-character key = %q, want the name alone", got)
	}
}
