package server

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed/changefeedtest"
	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	"github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	osplisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/operatingsystemconfig"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

// The benchmarks render the upstream ubuntu profile with the real renderer for
// n MachineDeployments, as the server would; the shared data sits beside the
// repository in every checkout and CI run.
const upstreamUbuntu = "../../../shared/upstream-osm/deploy/osps/default/osp-ubuntu.yaml"

func ubuntuProfile(b *testing.B) *ospv1alpha1.OperatingSystemProfile {
	data, err := os.ReadFile(upstreamUbuntu)
	if err != nil {
		b.Fatal(err)
	}
	osp, err := render.DecodeOSP(data)
	if err != nil {
		b.Fatal(err)
	}
	osp.Namespace, osp.UID, osp.ResourceVersion = "kube-system", "osp-uid", "1"
	return osp
}

func benchMDs(n int) []*clusterv1alpha1.MachineDeployment {
	mds := make([]*clusterv1alpha1.MachineDeployment, n)
	for i := range mds {
		mds[i] = machinecontrollertest.BenchMD(fmt.Sprintf("md-%04d", i))
	}
	return mds
}

// staticFacts are fixed facts.
type staticFacts struct{ f *facts.Facts }

func (s staticFacts) Current() *facts.Facts { return s.f }

// benchStorage returns the OSC storage over n MDs with the real resolver,
// render cache and renderer, without HTTP.
func benchStorage(b *testing.B, n int) *operatingsystemconfig.REST {
	mdInformer := informers.NewMachineDeployments(nil, "kube-system")
	feed := changefeedtest.New(0)
	for _, md := range benchMDs(n) {
		if err := mdInformer.GetIndexer().Add(md); err != nil {
			b.Fatal(err)
		}
		feed.Publish(watch.Added, md)
	}
	ospIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := ospIndexer.Add(ubuntuProfile(b)); err != nil {
		b.Fatal(err)
	}
	f, err := facts.New(render.ClusterInfo{ServerURL: "https://10.0.0.1:6443", CACert: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"},
		render.NodeOptions{ClusterDNSIPs: []string{"10.10.10.10"}, ContainerRuntime: "containerd"})
	if err != nil {
		b.Fatal(err)
	}
	mds := machines.NewLister(mdInformer.GetIndexer())
	resolver := resolve.New(resolve.Config{
		ProfileNamespace: "kube-system",
		Profiles:         osplisters.NewOperatingSystemProfileLister(ospIndexer),
		Facts:            staticFacts{f},
		Tokens:           resolve.StaticTokens{Kubelet: "abcdef.0123456789abcdef", Fetch: "getter-token"},
		Overlays:         benchOverlays(), // an overlay informer without overlays
		// As the server does: every render asks whether the MD may have its Secrets.
		Claims: &machines.Claims{MachineDeployments: mds,
			Secrets: corev1listers.NewSecretLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}))},
	})
	r := operatingsystemconfig.NewREST(mds, resolver, feed.Feed, nil)
	// Check the benchmark measures successful renders, not cached errors.
	obj, err := r.Get(genericapirequest.WithNamespace(context.Background(), "kube-system"), "md-0000", &metav1.GetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if e := obj.(*osm.OperatingSystemConfig).Status.RenderError; e != "" {
		b.Fatal(e)
	}
	return r
}

func BenchmarkGetCached(b *testing.B) {
	r := benchStorage(b, 1000)
	ctx := genericapirequest.WithNamespace(context.Background(), "kube-system")
	if _, err := r.List(ctx, nil); err != nil { // warm the cache
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Get(ctx, "md-0500", &metav1.GetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkList1000Cached(b *testing.B) {
	r := benchStorage(b, 1000)
	ctx := context.Background()
	if _, err := r.List(ctx, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		obj, err := r.List(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.ConvertToTable(ctx, obj, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList1000Cold renders all 1,000 MDs: run with -benchtime=1x.
func BenchmarkList1000Cold(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		r := benchStorage(b, 1000)
		b.StartTimer()
		if _, err := r.List(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHTTPList1000Table is `kubectl get osc -A` against the in-process
// server on 127.0.0.1, warm: TLS, authentication by the loopback token,
// table conversion, JSON.
func BenchmarkHTTPList1000Table(b *testing.B) {
	config, _ := startServer(b, fakeRender, benchMDs(1000)...)
	waitRendered(b, config, 1000)
	client := versioned.NewForConfigOrDie(config).OsmV1alpha1().RESTClient()
	list := func() {
		table := &metav1.Table{}
		err := client.Get().Resource("operatingsystemconfigs").
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(context.Background()).Into(table)
		if err != nil || len(table.Rows) != 1000 {
			b.Fatalf("%d rows, %v", len(table.Rows), err)
		}
	}
	list()
	for b.Loop() {
		list()
	}
}

// BenchmarkEncodeList1000 is the JSON encoding of a warm LIST of 1,000 full
// OSCs (client-go's LIST, not kubectl's table), as the server writes it.
func BenchmarkEncodeList1000(b *testing.B) {
	r := benchStorage(b, 1000)
	obj, err := r.List(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	info, _ := runtime.SerializerInfoForMediaType(registry.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	encoder := registry.Codecs.EncoderForVersion(info.Serializer, osmv1alpha1.SchemeGroupVersion)
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := encoder.Encode(obj, &buf); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}
