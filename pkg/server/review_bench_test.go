package server

import (
	"bytes"
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/tools/cache"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	overlaylisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/overlays"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry"
	"github.com/osm-apiserver/osm-apiserver/pkg/registry/profilereview"
)

// reviewOverlay is a candidate as the docs' examples are: a CA, a drop-in,
// a sysctl whose content is a template.
func reviewOverlay() *overlaysv1alpha1.OperatingSystemProfileOverlay {
	o := &overlaysv1alpha1.OperatingSystemProfileOverlay{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "company"}}
	o.Spec.Profiles = []string{"osp-ubuntu"}
	file := func(path, data string) {
		o.Spec.ProvisioningConfig.Files = append(o.Spec.ProvisioningConfig.Files, ospv1alpha1.File{
			Path: path, Content: ospv1alpha1.FileContent{Inline: &ospv1alpha1.FileContentInline{Data: data}}})
	}
	file("/usr/local/share/ca-certificates/company-ca.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	file("/etc/sysctl.d/95-inotify.conf", "fs.inotify.max_user_instances = {{ if .MaxPods }}8192{{ else }}1024{{ end }}\n")
	o.Spec.ProvisioningConfig.DropIns = []overlaysv1alpha1.UnitDropIn{{Unit: "osm-setup.service", Name: "10-ca.conf", Content: "[Service]\nExecStartPre=/usr/sbin/update-ca-certificates\n"}}
	return o
}

// BenchmarkProfileReview1000 creates a ProfileReview of an overlay over
// 1,000 MachineDeployments of the upstream Ubuntu profile, in process: two
// renders of each with the candidate (a new parse per review, as every
// review's candidate is new), the current output from the warm render
// cache, the diffs, one authorization per namespace. Encode is the answer's
// JSON, as the server writes it.
func BenchmarkProfileReview1000(b *testing.B) {
	oscs := benchStorage(b, 1000)
	ctx := context.Background()
	if _, err := oscs.List(ctx, nil); err != nil { // warm the cache: the current outputs
		b.Fatal(err)
	}
	reviews := profilereview.NewREST(profilereview.Config{
		ProfileNamespace: "kube-system", MachineDeployments: oscs.MachineDeployments,
		Resolver: oscs.Resolver.(profilereview.Previewer), Overlays: benchOverlays(),
		Authorizer: authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
			return authorizer.DecisionAllow, "", nil
		}),
		Feed: oscs.Feed,
	})
	ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: "admin"})
	review := func() *osm.ProfileReview {
		obj, err := reviews.Create(ctx, &osm.ProfileReview{Spec: osm.ProfileReviewSpec{Overlay: reviewOverlay()}}, nil, &metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		r := obj.(*osm.ProfileReview)
		if r.Status.Reviewed != 1000 || r.Status.Changed != 1000 {
			b.Fatalf("%d reviewed, %d changed: %+v", r.Status.Reviewed, r.Status.Changed, r.Status.MachineDeployments[0])
		}
		return r
	}
	b.Run("create", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			review()
		}
	})
	b.Run("encode", func(b *testing.B) {
		r := review()
		info, _ := runtime.SerializerInfoForMediaType(registry.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
		encoder := registry.Codecs.EncoderForVersion(info.Serializer, osmv1alpha1.SchemeGroupVersion)
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			if err := encoder.Encode(r, &buf); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(buf.Len()))
	})
}

// benchOverlays selects from an overlay informer's empty cache, as a server
// without overlays does.
func benchOverlays() *overlays.Selector {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	return &overlays.Selector{ServerNamespace: "kube-system", Overlays: overlaylisters.NewOperatingSystemProfileOverlayLister(indexer)}
}
