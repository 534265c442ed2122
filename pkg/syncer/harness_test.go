package syncer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"
	"k8s.io/client-go/tools/record"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens/tokenstest"
)

// fakeResolver renders "<osp version> <md revision> <tokens>" for every MD whose
// OSP exists; an OSP whose version starts with "broken" fails to render.
type fakeResolver struct {
	profiles cache.Indexer
	tokens   *tokens.Source
	mu       sync.Mutex
	calls    int
}

func (r *fakeResolver) Resolve(_ context.Context, md *clusterv1alpha1.MachineDeployment) *resolve.Rendered {
	r.mu.Lock()
	r.calls++
	r.mu.Unlock()
	p, _ := machinecontroller.ProfileOf(md, "kube-system")
	obj, ok, _ := r.profiles.GetByKey(p.String())
	if !ok {
		return &resolve.Rendered{Err: fmt.Errorf("operating system profile %s not found", p)}
	}
	osp := obj.(*ospv1alpha1.OperatingSystemProfile)
	ref := osm.ProfileReference{Namespace: p.Namespace, Name: p.Name, Version: osp.Spec.Version}
	if strings.HasPrefix(osp.Spec.Version, "broken") {
		return &resolve.Rendered{Profile: ref, Err: fmt.Errorf("%s: template: line 1: unexpected EOF", p.Name)}
	}
	if strings.HasPrefix(osp.Spec.Version, "huge") {
		return &resolve.Rendered{Profile: ref, Err: &resolve.SecretLimitError{Kind: osm.PayloadTypeProvisioning, Size: 1 << 21, Limit: 1 << 20}}
	}
	// Profiles of version join* post a MachineJoin; the others read the MD's Secrets.
	mode := osm.NodeJoinCompatibility
	if strings.HasPrefix(osp.Spec.Version, "join") {
		mode = osm.NodeJoinMachineJoin
	}
	kubelet, fetch := r.tokens.Tokens(md)
	if mode == osm.NodeJoinMachineJoin {
		kubelet = ""
	}
	if fetch == "" || kubelet == "" && mode != osm.NodeJoinMachineJoin {
		return &resolve.Rendered{Profile: ref, NodeJoin: mode, Err: &resolve.PendingError{Reason: "waiting for the syncer to create tokens"}}
	}
	body := fmt.Sprintf("%s rev=%s kubelet=%s fetch=%s", osp.Spec.Version,
		md.Annotations[machinecontroller.AnnotationMDRevision], kubelet, fetch)
	if strings.HasPrefix(osp.Spec.Version, "big") {
		body += strings.Repeat("#", 20<<10) // more than AWS takes as user-data
	}
	bootstrap, err1 := resolve.NewPayload(osm.PayloadFormatCloudInit, []byte("bootstrap "+body))
	provisioning, err2 := resolve.NewPayload(osm.PayloadFormatCloudInit, []byte("provisioning "+body))
	if err := errors.Join(err1, err2); err != nil {
		return &resolve.Rendered{Profile: ref, Err: err}
	}
	out := &resolve.Rendered{Profile: ref, CloudProvider: machinecontroller.CloudProvider(md), Bootstrap: bootstrap, Provisioning: provisioning, NodeJoin: mode}
	if machinecontroller.CloudProvider(md) == machinecontroller.CloudProviderEdge {
		out.EdgeScript, _ = resolve.NewPayload(osm.PayloadFormatShell, []byte("#!/bin/bash\n# join "+body))
	}
	return out
}

// fakeFacts are the cluster facts of the moment, swappable.
type fakeFacts struct {
	ca atomic.Value
}

func newFakeFacts(ca string) *fakeFacts {
	f := &fakeFacts{}
	f.ca.Store(ca)
	return f
}

func (f *fakeFacts) Current() *facts.Facts {
	v, err := facts.New(render.ClusterInfo{ServerURL: "https://127.0.0.1:6443", CACert: f.ca.Load().(string)}, render.NodeOptions{})
	if err != nil {
		panic(err) // hashing fixed test values cannot fail
	}
	return v
}

type harness struct {
	t        *testing.T
	client   *fake.Clientset
	mds      *fcache.FakeControllerSource
	osps     *fcache.FakeControllerSource
	recorder *record.FakeRecorder
	renderer *fakeResolver
	tokens   *tokens.Informer
	payloads *informers.Payloads
	// controller is the syncer under test.
	controller *Controller
}

// start runs a Controller on fake clients until the test ends.
func start(t *testing.T, mutate func(*Config)) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{
		t:        t,
		client:   newFakeClient(),
		mds:      fcache.NewFakeControllerSource(),
		osps:     fcache.NewFakeControllerSource(),
		recorder: record.NewFakeRecorder(100),
	}
	mdInformer := informers.NewMachineDeployments(h.mds, "kube-system")
	ospInformer := cache.NewSharedIndexInformer(h.osps, &ospv1alpha1.OperatingSystemProfile{}, 0, cache.Indexers{})
	h.tokens = informers.NewTokens(h.client, nil, nil)
	payloads := informers.NewPayloads(h.client, nil)
	h.payloads = payloads
	h.renderer = &fakeResolver{profiles: ospInformer.GetIndexer(), tokens: tokens.NewSource(h.tokens)}
	cfg := Config{
		Client:             h.client,
		MachineDeployments: mdInformer,
		Profiles:           ospInformer,
		Tokens:             h.tokens,
		Payloads:           payloads,
		Resolver:           h.renderer,
		Facts:              newFakeFacts("ca"),
		Recorder:           h.recorder,
		Workers:            2,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.controller = c
	done := make(chan struct{})
	go mdInformer.Run(ctx.Done())
	go ospInformer.Run(ctx.Done())
	h.tokens.Start(ctx.Done())
	payloads.Start(ctx.Done())
	go func() {
		defer close(done)
		// A test that is done before the informers synced cancels them.
		if err := c.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		h.mds.Shutdown()
		h.osps.Shutdown()
	})
	return h
}

// newFakeClient is a fake worker cluster that issues ServiceAccount tokens and
// says the syncer is osm-apiserver's ServiceAccount.
func newFakeClient() *fake.Clientset {
	client := machinecontrollertest.NewClientset()
	tokenstest.IssueTokens(client, time.Now)
	client.PrependReactor("create", "selfsubjectreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, &authenticationv1.SelfSubjectReview{Status: authenticationv1.SelfSubjectReviewStatus{
			UserInfo: authenticationv1.UserInfo{Username: "system:serviceaccount:kube-system:osm-apiserver"}}}, nil
	})
	return client
}

func profile(name, version string) *ospv1alpha1.OperatingSystemProfile {
	return &ospv1alpha1.OperatingSystemProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name},
		Spec:       ospv1alpha1.OperatingSystemProfileSpec{OSName: "ubuntu", Version: version},
	}
}

func machineDeployment(name, osp, revision string) *clusterv1alpha1.MachineDeployment {
	return &clusterv1alpha1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name, UID: "uid-" + "name",
			Annotations: map[string]string{machinecontroller.AnnotationOSP: osp, machinecontroller.AnnotationMDRevision: revision}},
	}
}

// eventually polls cond until it holds or 10 s pass.
func (h *harness) eventually(what string, cond func() (bool, error)) {
	h.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond() })
	if err != nil {
		h.t.Fatalf("%s: %v", what, err)
	}
}

func (h *harness) tokenIndex() cache.Indexer {
	return h.tokens.Index()
}
