package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	fakediscovery "k8s.io/client-go/discovery/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/metrics/testutil"

	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
)

// While upstream's OSC CRD or webhooks are installed, the check's line in
// /readyz?verbose says so and an Event is on our APIService; readiness never
// fails for it. Once they are gone, the line is plain again.
func TestUpstreamCheckWarnsWithoutFailing(t *testing.T) {
	kube := kubefake.NewClientset(&admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "operatingsystemmanager.k8c.io"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "machinedeployments.cluster.k8s.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: "operating-system-manager-webhook"}}}},
	})
	kube.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{
		{GroupVersion: "operatingsystemmanager.k8c.io/v1alpha1", APIResources: []metav1.APIResource{{Name: "operatingsystemconfigs"}, {Name: "operatingsystemprofiles"}}},
	}
	metrics.Register() // before the check's goroutine sets the gauge
	installed := func() float64 {
		v, err := testutil.GetGaugeMetricValue(metrics.UpstreamOSMInstalled)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	u := &upstreamCheck{management: kube, period: 10 * time.Millisecond}
	if u.Name() != "upstream-osm" {
		t.Errorf("name before the first check: %q", u.Name())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The fake discovery's resources are read without a lock: the check is
	// stopped while the test changes them.
	checkCtx, stopCheck := context.WithCancel(ctx)
	checking := make(chan struct{})
	go func() { defer close(checking); u.run(checkCtx) }()
	eventually := func(what string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			return cond(), nil
		}); err != nil {
			t.Fatalf("%s: %v; name %q", what, err, u.Name())
		}
	}
	eventually("a warning", func() bool {
		return strings.HasPrefix(u.Name(), "upstream-osm: warning: upstream operating-system-manager is still installed "+
			"(CustomResourceDefinition operatingsystemconfigs.operatingsystemmanager.k8c.io, ValidatingWebhookConfiguration operatingsystemmanager.k8c.io)")
	})
	if v := installed(); v != 1 {
		t.Errorf("osm_apiserver_upstream_osm_installed = %v while upstream is installed, want 1", v)
	}
	if err := u.Check(&http.Request{}); err != nil {
		t.Errorf("Check = %v, want nil: leftovers of upstream do not make osm-apiserver unready", err)
	}
	eventually("an Event on the APIService", func() bool {
		events, err := kube.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		return err == nil && len(events.Items) == 1 && events.Items[0].Reason == "UpstreamOSMInstalled" &&
			events.Items[0].InvolvedObject.Name == "v1alpha1.osm.k8c.io"
	})

	stopCheck()
	<-checking
	kube.Discovery().(*fakediscovery.FakeDiscovery).Resources = nil
	go u.run(ctx)
	if err := kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, "operatingsystemmanager.k8c.io", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("no warning once upstream is gone", func() bool { return u.Name() == "upstream-osm" })
	eventually("osm_apiserver_upstream_osm_installed 0 once upstream is gone", func() bool { return installed() == 0 })
}
