package servingcert

import (
	"bytes"
	"context"
	"encoding/base64"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics/testutil"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
)

var secretsGVR = corev1.SchemeGroupVersion.WithResource("secrets")

// newCluster is a fake cluster whose Secret updates, like kube-apiserver's,
// fail on a stale resourceVersion, with APIService v1alpha1.osm.k8c.io.
func newCluster(t *testing.T) (*fake.Clientset, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	client := fake.NewClientset()
	client.PrependReactor("update", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		s := a.(k8stesting.UpdateAction).GetObject().(*corev1.Secret)
		cur, err := client.Tracker().Get(secretsGVR, s.Namespace, s.Name)
		if err == nil && cur.(*corev1.Secret).ResourceVersion != s.ResourceVersion {
			return true, nil, apierrors.NewConflict(secretsGVR.GroupResource(), s.Name, nil)
		}
		n, _ := strconv.Atoi(s.ResourceVersion)
		s.ResourceVersion = strconv.Itoa(n + 1)
		return false, nil, nil
	})
	client.PrependReactor("create", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		a.(k8stesting.CreateAction).GetObject().(*corev1.Secret).ResourceVersion = "1"
		return false, nil, nil
	})
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": APIServiceName},
		"spec":     map[string]any{"group": "osm.k8c.io", "version": "v1alpha1"},
	}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{apiServices: "APIServiceList"}, apiService)
	return client, dyn
}

func newController(client *fake.Clientset, dyn *dynamicfake.FakeDynamicClient, now time.Time) *Controller {
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Secret{}, 0, cache.Indexers{})
	c := New(client, informer, NewAPIService(dyn, APIServiceName), Options{Namespace: "kube-system", Names: testNames, Validity: testValidity})
	c.now = func() time.Time { return now }
	return c
}

func secret(t *testing.T, client *fake.Clientset) *corev1.Secret {
	t.Helper()
	s, err := client.CoreV1().Secrets("kube-system").Get(context.Background(), SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type countListener struct{ n int }

func (l *countListener) Enqueue() { l.n++ }

func TestControllerCreatesSharesAndPublishes(t *testing.T) {
	metrics.Register()
	ctx := context.Background()
	client, dyn := newCluster(t)
	a := newController(client, dyn, t0)
	var l countListener
	a.AddListener(&l)
	if cert, key := a.CurrentCertKeyContent(); cert != nil || key != nil {
		t.Fatal("a certificate before the first sync")
	}
	if err := a.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	s := secret(t, client)
	if s.Type != corev1.SecretTypeTLS || s.Labels[machinecontroller.ManagedByLabel] != machinecontroller.ManagedByValue {
		t.Errorf("Secret of type %s, labels %v", s.Type, s.Labels)
	}
	cert, key := a.CurrentCertKeyContent()
	if !bytes.Equal(cert, s.Data[CertKey]) || !bytes.Equal(key, s.Data[KeyKey]) || l.n != 1 {
		t.Errorf("not serving the Secret's certificate (listener told %d times)", l.n)
	}
	for cert, want := range map[string]time.Time{"serving": t0.Add(testValidity.Cert), "ca": t0.Add(testValidity.CA)} {
		if got, err := testutil.GetGaugeMetricValue(metrics.ServingCertExpiry.WithLabelValues(cert)); err != nil || got != float64(want.Unix()) {
			t.Errorf("expiry of %s: %v (%v), want %d", cert, got, err, want.Unix())
		}
	}
	obj, err := dyn.Resource(apiServices).Get(ctx, APIServiceName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	caBundle, _, _ := unstructured.NestedString(obj.Object, "spec", "caBundle")
	if caBundle != base64.StdEncoding.EncodeToString(s.Data[BundleKey]) {
		t.Errorf("caBundle %q, want the Secret's bundle", caBundle)
	}

	// A second replica serves the same Secret and writes nothing, not even
	// the caBundle.
	client.ClearActions()
	dyn.ClearActions()
	b := newController(client, dyn, t0.Add(time.Minute))
	if err := b.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	for _, act := range append(client.Actions(), dyn.Actions()...) {
		if act.GetVerb() != "get" {
			t.Errorf("second replica: %s %s", act.GetVerb(), act.GetResource().Resource)
		}
	}
	if cert2, _ := b.CurrentCertKeyContent(); !bytes.Equal(cert2, cert) {
		t.Error("second replica serves another certificate")
	}
}

// A replica deciding from an older Secret than another wrote gets a conflict
// and decides again from the newer one instead of overwriting it.
func TestControllerDoesNotOverwriteANewerSecret(t *testing.T) {
	ctx := context.Background()
	client, dyn := newCluster(t)
	if err := newController(client, dyn, t0).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	stale := secret(t, client)
	renewal := t0.Add(testValidity.Cert * 3 / 4)
	if err := newController(client, dyn, renewal).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	newer := secret(t, client)
	if bytes.Equal(newer.Data[CertKey], stale.Data[CertKey]) {
		t.Fatal("no renewal")
	}
	late := newController(client, dyn, renewal.Add(time.Minute))
	if _, err := late.sync(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if got := secret(t, client); got.ResourceVersion != newer.ResourceVersion {
		t.Errorf("the Secret was written again (resourceVersion %s -> %s)", newer.ResourceVersion, got.ResourceVersion)
	}
	if cert, _ := late.CurrentCertKeyContent(); !bytes.Equal(cert, newer.Data[CertKey]) {
		t.Error("the late replica does not serve the newer certificate")
	}
}

// A Secret holding a still-valid CA without its key stays as it is: the
// error names it, nothing is served from it.
func TestControllerLeavesAnUnusableValidCA(t *testing.T) {
	ctx := context.Background()
	client, dyn := newCluster(t)
	good := plan(t, nil, t0).Data
	delete(good, CAKeyKey)
	if _, err := client.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: SecretName, Namespace: "kube-system"}, Type: corev1.SecretTypeTLS, Data: good,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := secret(t, client)
	c := newController(client, dyn, t0)
	err := c.RunOnce(ctx)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("secret kube-system/osm-apiserver-serving-cert: ca.crt holds a CA valid until")) {
		t.Fatalf("error %v", err)
	}
	if after := secret(t, client); after.ResourceVersion != before.ResourceVersion {
		t.Error("the Secret was replaced")
	}
	if cert, _ := c.CurrentCertKeyContent(); cert != nil {
		t.Error("serving a certificate of a Secret it cannot keep")
	}
}
