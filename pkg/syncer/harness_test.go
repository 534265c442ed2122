package syncer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"
	"k8s.io/client-go/tools/record"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootstraptoken"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinedeployments"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/rendercache"
)

// fakeRenderer renders "<osp version> <md revision> <tokens>" for every MD whose
// OSP exists; an OSP whose version starts with "broken" fails to render.
type fakeRenderer struct {
	profiles cache.Indexer
	creds    *CredentialSource
	mu       sync.Mutex
	calls    int
}

func (r *fakeRenderer) Render(_ context.Context, md *clusterv1alpha1.MachineDeployment) *rendercache.Entry {
	r.mu.Lock()
	r.calls++
	r.mu.Unlock()
	name, ns, _ := profileOf(md, "kube-system")
	obj, ok, _ := r.profiles.GetByKey(ns + "/" + name)
	if !ok {
		return &rendercache.Entry{Err: fmt.Errorf("operating system profile %s/%s not found", ns, name)}
	}
	osp := obj.(*ospv1alpha1.OperatingSystemProfile)
	ref := osm.ProfileReference{Namespace: ns, Name: name, Version: osp.Spec.Version}
	if strings.HasPrefix(osp.Spec.Version, "broken") {
		return &rendercache.Entry{Profile: ref, Err: fmt.Errorf("%s: template: line 1: unexpected EOF", name)}
	}
	creds, err := r.creds.Credentials(context.Background(), md)
	if err != nil {
		return &rendercache.Entry{Profile: ref, Err: err}
	}
	body := fmt.Sprintf("%s rev=%s kubelet=%s fetch=%s", osp.Spec.Version,
		md.Annotations[render.AnnotationMDRevision], creds.BootstrapToken, creds.CloudInitGetterToken)
	bootstrap, err1 := rendercache.NewPayload(osm.PayloadFormatCloudInit, []byte("bootstrap "+body))
	provisioning, err2 := rendercache.NewPayload(osm.PayloadFormatCloudInit, []byte("provisioning "+body))
	if err := errors.Join(err1, err2); err != nil {
		return &rendercache.Entry{Profile: ref, Err: err}
	}
	return &rendercache.Entry{Profile: ref, Bootstrap: bootstrap, Provisioning: provisioning}
}

type fakeCluster struct{}

func (fakeCluster) Cluster() (bootstraptoken.Cluster, error) {
	return bootstraptoken.Cluster{ServerURL: "https://127.0.0.1:6443", CACert: []byte("ca")}, nil
}

type harness struct {
	t        *testing.T
	client   *fake.Clientset
	mds      *fcache.FakeControllerSource
	osps     *fcache.FakeControllerSource
	recorder *record.FakeRecorder
	renderer *fakeRenderer
}

// start runs a Controller on fake clients until the test ends.
func start(t *testing.T, mutate func(*Config)) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{
		t:        t,
		client:   fake.NewClientset(),
		mds:      fcache.NewFakeControllerSource(),
		osps:     fcache.NewFakeControllerSource(),
		recorder: record.NewFakeRecorder(100),
	}
	mdInformer := machinedeployments.NewInformerFor(h.mds, 0)
	ospInformer := cache.NewSharedIndexInformer(h.osps, &ospv1alpha1.OperatingSystemProfile{}, 0, cache.Indexers{})
	secrets := NewSecretInformers(h.client, 0)
	h.renderer = &fakeRenderer{profiles: ospInformer.GetIndexer(), creds: NewCredentialSource(secrets)}
	cfg := Config{
		Client:             h.client,
		MachineDeployments: mdInformer,
		Profiles:           ospInformer,
		Secrets:            secrets,
		Renderer:           h.renderer,
		Cluster:            fakeCluster{},
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
	done := make(chan struct{})
	go mdInformer.Run(ctx.Done())
	go ospInformer.Run(ctx.Done())
	secrets.Start(ctx.Done())
	go func() {
		defer close(done)
		if err := c.Run(ctx); err != nil {
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

func profile(name, version string) *ospv1alpha1.OperatingSystemProfile {
	return &ospv1alpha1.OperatingSystemProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name},
		Spec:       ospv1alpha1.OperatingSystemProfileSpec{OSName: "ubuntu", Version: version},
	}
}

func machineDeployment(name, osp, revision string) *clusterv1alpha1.MachineDeployment {
	return &clusterv1alpha1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name, UID: "uid-" + "name",
			Annotations: map[string]string{render.AnnotationOSP: osp, render.AnnotationMDRevision: revision}},
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

func (h *harness) tokenLister() corev1listers.SecretLister {
	return h.renderer.creds.lister
}
