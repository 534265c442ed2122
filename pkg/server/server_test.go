package server

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/client-go/discovery"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	"github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	fakeosp "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens/tokenstest"
)

func fakeRender(in render.Input) (*render.Result, error) {
	return &render.Result{
		Config:       osm.OperatingSystemConfigSpec{OSName: string(in.OSP.Spec.OSName), ProvisioningUtility: "cloud-init"},
		Bootstrap:    render.Payload{Format: osm.PayloadFormatCloudInit, UserData: []byte("#cloud-config\n")},
		Provisioning: render.Payload{Format: osm.PayloadFormatCloudInit, UserData: []byte("#cloud-config\nruncmd: []\n")},
	}, nil
}

// listWatch is a fake that, like the fake clientsets, cannot stream initial
// events (watch-list); the reflector then lists and watches.
type listWatch struct{ *cache.ListWatch }

func (listWatch) IsWatchListSemanticsUnSupported() bool { return true }

// emptyListWatch lists list, empty, and watches nothing.
func emptyListWatch(list runtime.Object) listWatch {
	return listWatch{&cache.ListWatch{
		ListWithContextFunc:  func(context.Context, metav1.ListOptions) (runtime.Object, error) { return list.DeepCopyObject(), nil },
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}}
}

// startServer runs osm-apiserver on 127.0.0.1 with fake clusters behind it,
// its syncer included, waits until it is ready, and returns a client
// authenticated as the loopback (privileged) user.
func startServer(t testing.TB, renderer func(render.Input) (*render.Result, error), mds ...*clusterv1alpha1.MachineDeployment) (*rest.Config, *watch.FakeWatcher) {
	t.Helper()
	client, mdWatch := runServer(t, renderer, nil, mds...)
	var lastErr error
	readyz := func(ctx context.Context) (bool, error) {
		var body []byte
		body, lastErr = discovery.NewDiscoveryClientForConfigOrDie(client).RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return lastErr == nil && string(body) == "ok", nil
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 20*time.Second, true, readyz); err != nil {
		t.Fatalf("server not ready: %v", lastErr)
	}
	return client, mdWatch
}

// runServer runs osm-apiserver as startServer does, without waiting; mutate,
// if not nil, changes its configuration first.
func runServer(t testing.TB, renderer func(render.Input) (*render.Result, error), mutate func(*Config), mds ...*clusterv1alpha1.MachineDeployment) (*rest.Config, *watch.FakeWatcher) {
	t.Helper()
	secure := genericoptions.NewSecureServingOptions().WithLoopback()
	secure.BindAddress = net.ParseIP("127.0.0.1")
	listener, port, err := genericoptions.CreateListener("tcp", "127.0.0.1:0", net.ListenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	secure.Listener, secure.BindPort = listener, port
	secure.ServerCert.CertDirectory = t.TempDir()
	if err := secure.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		t.Fatal(err)
	}
	generic := genericapiserver.NewRecommendedConfig(registry.Codecs)
	generic.EffectiveVersion = compatibility.DefaultBuildEffectiveVersion()
	SetOpenAPI(&generic.Config)
	if err := secure.ApplyTo(&generic.SecureServing, &generic.LoopbackClientConfig); err != nil {
		t.Fatal(err)
	}
	mdWatch := watch.NewFakeWithChanSize(10, false)
	profile := &ospv1alpha1.OperatingSystemProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "osp-ubuntu", UID: "osp-uid", ResourceVersion: "1"},
		Spec:       ospv1alpha1.OperatingSystemProfileSpec{OSName: "ubuntu", Version: "v1.0.0"},
	}
	kube := machinecontrollertest.NewClientset()
	tokenstest.IssueTokens(kube, time.Now) // fetch tokens
	cfg := &Config{
		Generic: generic,
		Clusters: Clusters{
			Profiles:   fakeosp.NewSimpleClientset(profile),
			Management: kube,
			Worker:     kube,
			MachineDeployments: listWatch{&cache.ListWatch{
				ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
					list := &clusterv1alpha1.MachineDeploymentList{}
					for _, md := range mds {
						list.Items = append(list.Items, *md)
					}
					return list, nil
				},
				WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return mdWatch, nil },
			}},
			MachineSets: emptyListWatch(&clusterv1alpha1.MachineSetList{}),
			Machines:    emptyListWatch(&clusterv1alpha1.MachineList{}),
			Nodes:       emptyListWatch(&metav1.PartialObjectMetadataList{}),
			Metadata:    metadatafake.NewSimpleMetadataClient(metadatafake.NewTestScheme()),
		},
		Facts:  facts.Config{Cluster: render.ClusterInfo{ServerURL: "https://127.0.0.1:6443", CACert: "ca"}},
		Render: renderer,
	}
	if mutate != nil {
		mutate(cfg)
	}
	server, err := cfg.Complete().New()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- server.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server stopped with %v", err)
		}
	})
	client := rest.CopyConfig(generic.LoopbackClientConfig)
	client.Timeout = 10 * time.Second
	return client, mdWatch
}

func TestServer(t *testing.T) {
	md := machinecontrollertest.MD("kube-system", "workers", "osp-ubuntu", map[string]string{"pool": "a"})
	config, mdWatch := startServer(t, fakeRender, md)
	ctx := context.Background()
	client := versioned.NewForConfigOrDie(config).OsmV1alpha1()
	list := waitRendered(t, config, 1)

	resources, err := discovery.NewDiscoveryClientForConfigOrDie(config).ServerResourcesForGroupVersion("osm.k8c.io/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resources.APIResources {
		want := "get,list,watch"
		switch r.Name {
		case "machinejoins":
			want = "create"
		case "profilereviews":
			want = "create" // a question answered, like a SubjectAccessReview
		case "bootreports/step":
			want = "create" // nodes post their step records there
		}
		if slices.Sort(r.Verbs); strings.Join(r.Verbs, ",") != want || r.SingularName == "" && !strings.Contains(r.Name, "/") {
			t.Errorf("%s: verbs %v, singular %q; want %s only", r.Name, r.Verbs, r.SingularName, want)
		}
	}

	if len(list.Items) != 1 || list.Items[0].Spec.OSName != "ubuntu" || list.Items[0].Status.Profile.Version != "v1.0.0" {
		t.Fatalf("list %+v", list.Items)
	}
	payload, err := client.ProvisioningPayloads("kube-system").Get(ctx, "workers-provisioning", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if payload.Spec.UserData != "#cloud-config\nruncmd: []\n" {
		t.Errorf("userData %q", payload.Spec.UserData)
	}
	if _, err := client.OperatingSystemConfigs("kube-system").Get(ctx, "nope", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("unknown name: %v", err)
	}
	err = client.RESTClient().Post().Namespace("kube-system").Resource("operatingsystemconfigs").Body([]byte(`{}`)).Do(ctx).Error()
	if !apierrors.IsMethodNotSupported(err) {
		t.Errorf("create: want 405, got %v", err)
	}

	w, err := client.OperatingSystemConfigs("kube-system").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	relabelled := md.DeepCopy()
	relabelled.Labels["pool"] = "b"
	relabelled.ResourceVersion = "2"
	mdWatch.Modify(relabelled)
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Modified {
			t.Fatalf("event %s %v", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event for an MD change")
	}

	// Watch-list, as client-go informers ask for it: the initial events end
	// with a bookmark.
	sendInitial := true
	w2, err := client.OperatingSystemConfigs("").Watch(ctx, metav1.ListOptions{
		SendInitialEvents: &sendInitial, AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	for _, want := range []watch.EventType{watch.Added, watch.Bookmark} {
		select {
		case ev := <-w2.ResultChan():
			if ev.Type != want {
				t.Fatalf("event %s, want %s", ev.Type, want)
			}
			if m, _ := meta.Accessor(ev.Object); want == watch.Bookmark && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
				t.Errorf("bookmark without the initial-events-end annotation: %v", m.GetAnnotations())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s event", want)
		}
	}

	table := &metav1.Table{}
	err = client.RESTClient().Get().Resource("operatingsystemconfigs").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx).Into(table)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 1 || len(table.ColumnDefinitions) != len(table.Rows[0].Cells) {
		t.Errorf("table %d rows, %d columns", len(table.Rows), len(table.ColumnDefinitions))
	}
}

// waitRendered waits until the server lists n OSCs, none pending: the syncer,
// running on the fake cluster, creates each MD's tokens first.
func waitRendered(t testing.TB, config *rest.Config, n int) *osmv1alpha1.OperatingSystemConfigList {
	t.Helper()
	client := versioned.NewForConfigOrDie(config).OsmV1alpha1()
	var list *osmv1alpha1.OperatingSystemConfigList
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		if list, err = client.OperatingSystemConfigs("").List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != n {
			return false, err
		}
		for _, osc := range list.Items {
			if osc.Status.Pending != "" {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("%d configs did not render: %v", n, err)
	}
	return list
}
