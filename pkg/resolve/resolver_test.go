package resolve

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	osplisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

const token = "abcdef.0123456789abcdef"

// fakeRenderer writes the tokens it is given into a file and the payloads, as
// real profiles do, and fails for profiles named "broken".
// Its view fails for profiles named "viewfails".
type fakeRenderer struct {
	calls atomic.Int64
	views atomic.Int64
}

func (f *fakeRenderer) Render(in render.Input) (*render.Result, error) {
	if !in.View {
		f.calls.Add(1)
	} else {
		f.views.Add(1)
	}
	if in.OSP.Name == "broken" {
		return nil, errors.New("broken: template: line 1: unclosed action")
	}
	if in.OSP.Name == "viewfails" && in.View {
		return nil, errors.New("viewfails: the placeholder is no token")
	}
	secret := "token=" + in.Cluster.BootstrapToken + " getter=" + in.Cluster.CloudInitGetterToken
	provisioning := []byte("#cloud-config\n")
	if in.OSP.Name == "huge" {
		provisioning = append(provisioning, strings.Repeat("#", 1<<20)...)
	}
	return &render.Result{
		Config: osm.OperatingSystemConfigSpec{
			OSName: string(in.OSP.Spec.OSName),
			ProvisioningConfig: osm.OSCConfig{
				Files: []osm.File{{Path: "/etc/kubernetes/bootstrap", Content: osm.FileContent{Inline: &osm.FileContentInline{Data: secret}}}},
				CloudInitModules: &osm.CloudInitModule{
					RunCMD:         []string{"curl -H 'Authorization: Bearer " + in.Cluster.CloudInitGetterToken + "'"},
					RHSubscription: map[string]string{"username": "me", "password": "hunter2"},
				},
			},
		},
		Bootstrap:    render.Payload{Format: osm.PayloadFormatCloudInit, UserData: []byte("#cloud-config\n" + secret)},
		Provisioning: render.Payload{Format: osm.PayloadFormatCloudInit, UserData: provisioning},
	}, nil
}

type fixture struct {
	resolver *Resolver
	renderer *fakeRenderer
	profiles cache.Indexer
	facts    *fakeFacts
}

// fakeFacts are swappable facts.
type fakeFacts struct {
	current atomic.Pointer[facts.Facts]
	err     error
}

func (f *fakeFacts) Current() *facts.Facts { return f.current.Load() }

func (f *fakeFacts) Err() error { return f.err }

func (f *fakeFacts) set(t testing.TB, cluster render.ClusterInfo, node render.NodeOptions) {
	t.Helper()
	v, err := facts.New(cluster, node)
	if err != nil {
		t.Fatal(err)
	}
	f.current.Store(v)
}

func newFixture(t *testing.T, osps ...*ospv1alpha1.OperatingSystemProfile) *fixture {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, osp := range osps {
		if err := indexer.Add(osp); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{renderer: &fakeRenderer{}, profiles: indexer, facts: &fakeFacts{}}
	f.facts.set(t, render.ClusterInfo{ServerURL: "https://127.0.0.1:6443"}, render.NodeOptions{ClusterDNSIPs: []string{"10.10.10.10"}})
	f.resolver = New(Config{
		ProfileNamespace: "kube-system",
		Profiles:         osplisters.NewOperatingSystemProfileLister(indexer),
		Facts:            f.facts,
		Tokens:           StaticTokens{Kubelet: token, Fetch: "getter-secret-value"},
		Render:           f.renderer.Render,
		CacheBytes:       1 << 20,
	})
	return f
}

func osp(namespace, name, version, rv string) *ospv1alpha1.OperatingSystemProfile {
	return &ospv1alpha1.OperatingSystemProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name), ResourceVersion: rv},
		Spec:       ospv1alpha1.OperatingSystemProfileSpec{OSName: "ubuntu", OSVersion: "24.04", Version: version},
	}
}

func md(profile string) *clusterv1alpha1.MachineDeployment {
	return &clusterv1alpha1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "kube-system", Name: "workers", UID: "md-uid", ResourceVersion: "10", Generation: 1,
			Annotations: map[string]string{machinecontroller.AnnotationOSP: profile, "machinedeployment.clusters.k8s.io/revision": "1"},
		},
		Spec: clusterv1alpha1.MachineDeploymentSpec{Template: clusterv1alpha1.MachineTemplateSpec{Spec: clusterv1alpha1.MachineSpec{
			ProviderSpec: clusterv1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: []byte(`{"cloudProvider":"aws"}`)}},
		}}},
	}
}

func TestRenderIsCachedUntilAnInputChanges(t *testing.T) {
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	base := md("osp-ubuntu")
	if e := f.resolver.Resolve(context.Background(), base); e.Err != nil {
		t.Fatal(e.Err)
	}
	tests := []struct {
		name       string
		change     func(*clusterv1alpha1.MachineDeployment)
		wantRender bool
	}{
		{name: "nothing changed", change: func(*clusterv1alpha1.MachineDeployment) {}},
		{name: "status-only update", change: func(m *clusterv1alpha1.MachineDeployment) {
			m.ResourceVersion = "11"
			m.Status.Replicas = 3
		}},
		{name: "spec changed", wantRender: true, change: func(m *clusterv1alpha1.MachineDeployment) {
			m.ResourceVersion = "12"
			m.Spec.Template.Spec.ProviderSpec.Value.Raw = []byte(`{"cloudProvider":"azure"}`)
		}},
		{name: "annotation changed", wantRender: true, change: func(m *clusterv1alpha1.MachineDeployment) {
			m.ResourceVersion = "13"
			m.Annotations["v1.kubelet-config.machine-controller.kubermatic.io/MaxPods"] = "50"
		}},
		{name: "revision changed", wantRender: true, change: func(m *clusterv1alpha1.MachineDeployment) {
			m.ResourceVersion = "14"
			m.Annotations["machinedeployment.clusters.k8s.io/revision"] = "2"
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := base.DeepCopy()
			tc.change(m)
			before := f.renderer.calls.Load()
			f.resolver.Resolve(context.Background(), m)
			if rendered := f.renderer.calls.Load() > before; rendered != tc.wantRender {
				t.Errorf("rendered = %v, want %v", rendered, tc.wantRender)
			}
		})
	}
}

func TestProfileChangeRerenders(t *testing.T) {
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	m := md("osp-ubuntu")
	if e := f.resolver.Resolve(context.Background(), m); e.Profile.Version != "v1.0.0" {
		t.Fatalf("profile %+v", e.Profile)
	}
	if err := f.profiles.Update(osp("kube-system", "osp-ubuntu", "v1.1.0", "2")); err != nil {
		t.Fatal(err)
	}
	e := f.resolver.Resolve(context.Background(), m)
	if e.Profile.Version != "v1.1.0" || f.renderer.calls.Load() != 2 {
		t.Errorf("after a profile update: version %s, %d renders", e.Profile.Version, f.renderer.calls.Load())
	}
}

func TestTokensChangeRerenders(t *testing.T) {
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	m := md("osp-ubuntu")
	f.resolver.Resolve(context.Background(), m)
	f.resolver.cfg.Tokens = StaticTokens{Kubelet: "zyxwvu.fedcba9876543210", Fetch: "other-getter"}
	e := f.resolver.Resolve(context.Background(), m)
	if data := userData(t, e.Bootstrap); !strings.Contains(data, "zyxwvu.fedcba9876543210") {
		t.Errorf("stale token in payload: %q", data)
	}
}

func TestRedaction(t *testing.T) {
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	e := f.resolver.Resolve(context.Background(), md("osp-ubuntu"))
	spec, err := e.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg := spec.ProvisioningConfig
	for _, s := range []string{cfg.Files[0].Content.Inline.Data, cfg.CloudInitModules.RunCMD[0], cfg.CloudInitModules.RHSubscription["password"]} {
		if strings.Contains(s, "0123456789abcdef") || strings.Contains(s, "getter-secret-value") || strings.Contains(s, "hunter2") {
			t.Errorf("secret in the config view: %q", s)
		}
		if !strings.Contains(s, Redacted) {
			t.Errorf("nothing redacted in %q", s)
		}
	}
	// The payload keeps the real tokens: it is what the node needs.
	if data := userData(t, e.Bootstrap); !strings.Contains(data, token) {
		t.Errorf("payload lost its token: %q", data)
	}
}

func TestErrors(t *testing.T) {
	f := newFixture(t, osp("kube-system", "broken", "v1.0.0", "1"), osp("other", "osp-ubuntu", "v2.0.0", "1"))
	tests := []struct {
		name, profile, namespace, wantErr string
	}{
		{name: "missing profile", profile: "nope", wantErr: "operatingsystemprofile kube-system/nope not found"},
		{name: "profile in the default namespace only", profile: "osp-ubuntu", wantErr: "kube-system/osp-ubuntu not found"},
		{name: "profile namespace annotation", profile: "osp-ubuntu", namespace: "other"},
		{name: "template error", profile: "broken", wantErr: "unclosed action"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := md(tc.profile)
			if tc.namespace != "" {
				m.Annotations[machinecontroller.AnnotationOSPNamespace] = tc.namespace
			}
			e := f.resolver.Resolve(context.Background(), m)
			if tc.wantErr == "" {
				if e.Err != nil {
					t.Fatal(e.Err)
				}
				return
			}
			if e.Err == nil || !strings.Contains(e.Err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want %q", e.Err, tc.wantErr)
			}
		})
	}
}

// Without tokens or facts there is nothing to render yet: the output is
// pending, not failed, and nothing is cached.
func TestPending(t *testing.T) {
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	f.resolver.cfg.Tokens = noTokens{}
	if reason, ok := f.resolver.Resolve(context.Background(), md("osp-ubuntu")).Pending(); !ok || reason != waitingForTokens {
		t.Errorf("without tokens: pending %q, %v", reason, ok)
	}
	f.resolver.cfg.Tokens = StaticTokens{Kubelet: token, Fetch: "getter-secret-value"}
	f.facts.current.Store(nil)
	if reason, ok := f.resolver.Resolve(context.Background(), md("osp-ubuntu")).Pending(); !ok || reason != waitingForFacts {
		t.Errorf("without facts: pending %q, %v", reason, ok)
	}
	if f.renderer.calls.Load() != 0 || f.resolver.cache.Len() != 0 {
		t.Errorf("%d renders, %d cached while pending", f.renderer.calls.Load(), f.resolver.cache.Len())
	}
}

// Without an API server address nodes can reach, the output fails and says
// why: an operator has to act. With facts, it says which address nodes get.
func TestNoAPIServerForNodes(t *testing.T) {
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	f.facts.current.Store(nil)
	f.facts.err = &facts.NoAPIServerError{Kubeconfig: "https://10.96.0.1:443"}
	out := f.resolver.Resolve(context.Background(), md("osp-ubuntu"))
	if _, pending := out.Pending(); pending || out.Err == nil || !strings.Contains(out.Err.Error(), "is an in-cluster Service address") {
		t.Errorf("err %v, want the in-cluster Service address named", out.Err)
	}
	f.facts.err = nil
	f.facts.set(t, render.ClusterInfo{ServerURL: "https://10.0.0.1:6443", CACert: "ca"}, render.NodeOptions{})
	if out := f.resolver.Resolve(context.Background(), md("osp-ubuntu")); out.Err != nil || out.APIServer == nil || out.APIServer.URL != "https://10.0.0.1:6443" {
		t.Errorf("err %v, API server %+v", out.Err, out.APIServer)
	}
}

type noTokens struct{}

func (noTokens) Tokens(*clusterv1alpha1.MachineDeployment) (string, string) {
	return "", ""
}

// An MD whose profile joins through a MachineJoin renders with its fetch
// token alone, and never with a kubelet token left over; in the
// compatibility mode both are needed. Either output says which mode it is,
// pending or not; a profile that does not parse has none.
func TestNodeJoinMode(t *testing.T) {
	joins := osp("kube-system", "joins", "v1.0.0", "1")
	f := newFixture(t, joins, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	f.resolver.cfg.NodeJoin = func(p *ospv1alpha1.OperatingSystemProfile, _ []*overlaysv1alpha1.OperatingSystemProfileOverlay, _ string) (osm.NodeJoinMode, error) {
		switch p.Name {
		case "joins":
			return osm.NodeJoinMachineJoin, nil
		case "broken":
			return "", errors.New("broken: template: line 1: unclosed action")
		}
		return osm.NodeJoinCompatibility, nil
	}
	f.resolver.cfg.Tokens = StaticTokens{Fetch: "getter-secret-value"}
	out := f.resolver.Resolve(context.Background(), md("joins"))
	if out.Err != nil || out.NodeJoin != osm.NodeJoinMachineJoin {
		t.Fatalf("MachineJoin without a kubelet token: %v, mode %q", out.Err, out.NodeJoin)
	}
	if reason, ok := f.resolver.Resolve(context.Background(), md("osp-ubuntu")).Pending(); !ok || reason != waitingForTokens {
		t.Errorf("compatibility without a kubelet token: pending %q, %v", reason, ok)
	}
	f.resolver.cfg.Tokens = StaticTokens{Kubelet: token, Fetch: "getter-secret-value"}
	again := f.resolver.Resolve(context.Background(), md("joins"))
	if again != out || strings.Contains(string(mustUserData(t, again.Bootstrap)), token) {
		t.Error("a kubelet token changed the render of a MachineJoin MD")
	}
	if out := f.resolver.Resolve(context.Background(), md("osp-ubuntu")); out.Err != nil || out.NodeJoin != osm.NodeJoinCompatibility {
		t.Errorf("compatibility: %v, mode %q", out.Err, out.NodeJoin)
	}
	f.resolver.cfg.Tokens = noTokens{}
	if out := f.resolver.Resolve(context.Background(), md("joins")); out.NodeJoin != osm.NodeJoinMachineJoin {
		t.Errorf("pending MachineJoin MD: mode %q", out.NodeJoin)
	}
	if err := f.profiles.Add(osp("kube-system", "broken", "v1.0.0", "1")); err != nil {
		t.Fatal(err)
	}
	if out := f.resolver.Resolve(context.Background(), md("broken")); out.Err == nil || out.NodeJoin != "" {
		t.Errorf("broken profile: %v, mode %q", out.Err, out.NodeJoin)
	}
}

func mustUserData(t *testing.T, p Payload) []byte {
	t.Helper()
	data, err := p.UserData()
	if err != nil {
		t.Fatal(err)
	}
	return data
}
