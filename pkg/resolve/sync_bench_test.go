package resolve

import (
	"context"
	"fmt"
	"os"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	osplisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// upstreamUbuntu sits beside the repository in every checkout and CI run.
const upstreamUbuntu = "../../../shared/upstream-osm/deploy/osps/default/osp-ubuntu.yaml"

// benchResolver is a resolver over the upstream ubuntu profile with the real
// renderer; newMD returns the i-th MachineDeployment of it.
func benchResolver(b testing.TB) (*Resolver, func(int) *clusterv1alpha1.MachineDeployment) {
	b.Helper()
	data, err := os.ReadFile(upstreamUbuntu)
	if err != nil {
		b.Fatalf("the upstream OSM data beside the repository (../shared/upstream-osm) is missing: %v", err)
	}
	osp, err := render.DecodeOSP(data)
	if err != nil {
		b.Fatal(err)
	}
	osp.Namespace, osp.UID, osp.ResourceVersion = "kube-system", "osp-uid", "1"
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := indexer.Add(osp); err != nil {
		b.Fatal(err)
	}
	f, err := facts.New(render.ClusterInfo{ServerURL: "https://10.0.0.1:6443", CACert: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"},
		render.NodeOptions{ClusterDNSIPs: []string{"10.10.10.10"}, ContainerRuntime: "containerd"})
	if err != nil {
		b.Fatal(err)
	}
	r := New(Config{
		ProfileNamespace: "kube-system",
		Profiles:         osplisters.NewOperatingSystemProfileLister(indexer),
		Facts:            &fakeFacts{},
		Tokens:           StaticTokens{Kubelet: "abcdef.0123456789abcdef", Fetch: "getter-token-value"},
	})
	r.cfg.Facts.(*fakeFacts).current.Store(f)
	newMD := func(i int) *clusterv1alpha1.MachineDeployment {
		return machinecontrollertest.BenchMD(fmt.Sprintf("md-%06d", i))
	}
	return r, newMD
}

// BenchmarkSyncRender is what the syncer does for a new MachineDeployment:
// resolve it (a render, the cache misses) and read both payloads to write its
// Secret; the upstream ubuntu profile, the real renderer, a new MD each time.
func BenchmarkSyncRender(b *testing.B) {
	r, newMD := benchResolver(b)
	// Parse the profile before the timer starts.
	if out := r.Resolve(context.Background(), newMD(-1)); out.Err != nil {
		b.Fatal(out.Err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		md := newMD(i)
		out := r.Resolve(context.Background(), md)
		if out.Err != nil {
			b.Fatal(out.Err)
		}
		for _, p := range []Payload{out.Bootstrap, out.Provisioning} {
			if _, err := p.UserData(); err != nil {
				b.Fatal(err)
			}
		}
		r.Forget(md.UID)
		i++
	}
}
