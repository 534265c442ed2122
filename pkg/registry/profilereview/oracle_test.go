package profilereview

import (
	"context"
	"encoding/json"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/tools/cache"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/changefeed/changefeedtest"
	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	osplisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/operatingsystemmanager/v1alpha1"
	overlaylisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/overlays"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

// The MD's fetch token: what the guesses below try to recover.
const fetchToken = "eyJhbGciOiJSUzI1NiJ9.the-real-fetch-token"

const oracleOSP = `apiVersion: operatingsystemmanager.k8c.io/v1alpha1
kind: OperatingSystemProfile
metadata:
  name: osp-oracle
  namespace: kube-system
  uid: osp-oracle-uid
  resourceVersion: "1"
spec:
  osName: ubuntu
  osVersion: "24.04"
  version: v1.0.0
  provisioningUtility: cloud-init
  supportedCloudProviders:
    - name: aws
  bootstrapConfig:
    files:
      - path: /etc/bootstrap-token
        content:
          inline:
            data: "token={{ .Token }}\n"
  provisioningConfig:
    files:
      - path: /etc/hello
        content:
          inline:
            data: "hello\n"
`

type staticFacts struct{ f *facts.Facts }

func (s staticFacts) Current() *facts.Facts { return s.f }

// realREST is a review storage over a real resolver and renderer, one MD of
// team-a on osp-oracle, whose fetch token is fetchToken.
func realREST(t *testing.T) *REST {
	t.Helper()
	osp, err := render.DecodeOSP([]byte(oracleOSP))
	if err != nil {
		t.Fatal(err)
	}
	profiles := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := profiles.Add(osp); err != nil {
		t.Fatal(err)
	}
	f, err := facts.New(render.ClusterInfo{ServerURL: "https://10.0.0.1:6443"}, render.NodeOptions{ClusterDNSIPs: []string{"10.10.10.10"}, ContainerRuntime: "containerd"})
	if err != nil {
		t.Fatal(err)
	}
	md := machinecontrollertest.MD("team-a", "pool", "osp-oracle", nil)
	md.Annotations[machinecontroller.AnnotationOSP] = "osp-oracle"
	md.Spec.Template.Spec.Versions.Kubelet = "1.31.2"
	md.Spec.Template.Spec.ProviderSpec = clusterv1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: []byte(
		`{"cloudProvider":"aws","cloudProviderSpec":{"region":"eu-west-1"},"operatingSystem":"ubuntu","operatingSystemSpec":{}}`)}}
	overlayIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	selector := &overlays.Selector{ServerNamespace: "kube-system", Overlays: overlaylisters.NewOperatingSystemProfileOverlayLister(overlayIndexer)}
	resolver := resolve.New(resolve.Config{
		ProfileNamespace: "kube-system",
		Profiles:         osplisters.NewOperatingSystemProfileLister(profiles),
		Facts:            staticFacts{f},
		Tokens:           resolve.StaticTokens{Kubelet: "abcdef.0123456789abcdef", Fetch: fetchToken},
		Overlays:         selector,
	})
	if out := resolver.Resolve(context.Background(), md); out.Err != nil {
		t.Fatalf("the MD does not render: %v", out.Err)
	}
	return NewREST(Config{
		ProfileNamespace: "kube-system", MachineDeployments: machinecontrollertest.Lister{md}, Resolver: resolver,
		Overlays: selector, Authorizer: namespaces{"team-a": true}, Feed: changefeedtest.New(1).Feed,
	})
}

// guessing is a candidate overlay whose output depends on whether the
// fetch token starts with guess, with body in that branch.
func guessing(guess, body string) *overlaysv1alpha1.OperatingSystemProfileOverlay {
	o := &overlaysv1alpha1.OperatingSystemProfileOverlay{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "guess"}}
	o.Spec.Profiles = []string{"osp-oracle"}
	o.Spec.ProvisioningConfig.Files = []ospv1alpha1.File{{Path: "/etc/guess", Content: ospv1alpha1.FileContent{Inline: &ospv1alpha1.FileContentInline{
		Data: `{{ if hasPrefix "` + guess + `" .Token }}` + body + `{{ end }}guessed` + "\n"}}}}
	return o
}

// answer is the review's status as JSON, as the caller gets it.
func answer(t *testing.T, r *REST, who string, o *overlaysv1alpha1.OperatingSystemProfileOverlay) string {
	t.Helper()
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: who})
	obj, err := r.Create(ctx, &osm.ProfileReview{Spec: osm.ProfileReviewSpec{Overlay: o}}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pr := obj.(*osm.ProfileReview)
	if pr.Status.Reviewed != 1 {
		t.Fatalf("%s reviewed %d MDs, want 1", who, pr.Status.Reviewed)
	}
	data, err := json.Marshal(pr.Status)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestReviewIsNoOracleWithoutPayloadAccess: two candidates that differ only
// in a branch on the fetch token's first characters — one guess right, one
// wrong — give byte-identical answers to a caller who may read the MD's OSC
// but not its provisioningpayloads, and different ones to a caller who may
// read the payloads (who reads the token anyway).
func TestReviewIsNoOracleWithoutPayloadAccess(t *testing.T) {
	r := realREST(t)
	right, wrong := fetchToken[:3], "zzz"
	for _, branch := range []struct{ name, body string }{
		{"larger output", `{{ repeat 997 "x" }}`},
		{"failing template", `{{ fail "guessed right" }}`},
	} {
		t.Run(branch.name, func(t *testing.T) {
			viewRight, viewWrong := answer(t, r, "viewer", guessing(right, branch.body)), answer(t, r, "viewer", guessing(wrong, branch.body))
			if viewRight != viewWrong {
				t.Errorf("a caller without payload access tells the guesses apart:\nright: %s\nwrong: %s", viewRight, viewWrong)
			}
			payloadRight, payloadWrong := answer(t, r, "alice", guessing(right, branch.body)), answer(t, r, "alice", guessing(wrong, branch.body))
			if payloadRight == payloadWrong {
				t.Errorf("a payload reader gets the same answer for both guesses, want today's answer from the real values: %s", payloadRight)
			}
		})
	}
}
