package machines

import (
	"strings"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

func TestLister(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, md := range []*clusterv1alpha1.MachineDeployment{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "one", Labels: map[string]string{"pool": "x"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "two"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "one"}},
	} {
		if err := indexer.Add(md); err != nil {
			t.Fatal(err)
		}
	}
	l := NewLister(indexer)
	tests := []struct {
		namespace, selector string
		want                int
	}{
		{namespace: "", selector: "", want: 3},
		{namespace: "a", selector: "", want: 2},
		{namespace: "a", selector: "pool=x", want: 1},
		{namespace: "c", selector: "", want: 0},
	}
	for _, tc := range tests {
		selector, err := labels.Parse(tc.selector)
		if err != nil {
			t.Fatal(err)
		}
		mds, err := l.List(tc.namespace, selector)
		if err != nil || len(mds) != tc.want {
			t.Errorf("List(%q, %q) = %d MDs, %v; want %d", tc.namespace, tc.selector, len(mds), err, tc.want)
		}
	}
	if md, err := l.Get("b", "one"); err != nil || md.Namespace != "b" {
		t.Errorf("Get(b, one) = %v, %v", md, err)
	}
	if _, err := l.Get("b", "two"); !errors.IsNotFound(err) {
		t.Errorf("Get(b, two): want NotFound, got %v", err)
	}
}

func TestUsingProfile(t *testing.T) {
	informer := newMachineDeploymentInformer(&cache.ListWatch{}, "kube-system")
	for _, md := range []*clusterv1alpha1.MachineDeployment{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "default-ns", Annotations: map[string]string{machinecontroller.AnnotationOSP: "osp-ubuntu"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "own-ns", Annotations: map[string]string{machinecontroller.AnnotationOSP: "osp-ubuntu", machinecontroller.AnnotationOSPNamespace: "team"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "other", Annotations: map[string]string{machinecontroller.AnnotationOSP: "osp-flatcar"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "none"}},
	} {
		if err := informer.GetIndexer().Add(md); err != nil {
			t.Fatal(err)
		}
	}
	l := NewLister(informer.GetIndexer())
	for p, want := range map[machinecontroller.Profile]string{
		{Namespace: "kube-system", Name: "osp-ubuntu"}: "default-ns",
		{Namespace: "team", Name: "osp-ubuntu"}:        "own-ns",
		{Namespace: "kube-system", Name: "osp-rhel"}:   "",
	} {
		mds, err := l.UsingProfile(p)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, md := range mds {
			names = append(names, md.Name)
		}
		if strings.Join(names, ",") != want {
			t.Errorf("UsingProfile(%s) = %v, want %q", p, names, want)
		}
	}
}

func profileMD(annotations map[string]string, providerSpec string) *clusterv1alpha1.MachineDeployment {
	md := &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "pool", Annotations: annotations}}
	if providerSpec != "" {
		md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(providerSpec)}
	}
	return md
}

// A profile change finds the MDs that use it by default through the index;
// an MD without a default is in no profile's entry.
func TestUsingProfileFindsDefaultedMachineDeployments(t *testing.T) {
	informer := newMachineDeploymentInformer(&cache.ListWatch{}, "kube-system")
	for _, md := range []*clusterv1alpha1.MachineDeployment{
		profileMD(nil, `{"operatingSystem":"ubuntu"}`),
		profileMD(map[string]string{machinecontroller.AnnotationOSP: "osp-ubuntu"}, ""),
		profileMD(nil, `{"operatingSystem":"sles"}`),
	} {
		md.Name += "-" + string(rune('a'+len(informer.GetIndexer().List())))
		if err := informer.GetIndexer().Add(md); err != nil {
			t.Fatal(err)
		}
	}
	mds, err := NewLister(informer.GetIndexer()).UsingProfile(machinecontroller.Profile{Namespace: "kube-system", Name: "osp-ubuntu"})
	if err != nil || len(mds) != 2 {
		t.Fatalf("UsingProfile(osp-ubuntu) = %d MDs, %v; want 2", len(mds), err)
	}
	if keys := informer.GetIndexer().ListIndexFuncValues(ProfileIndex); len(keys) != 1 {
		t.Errorf("profile index keys %v, want only kube-system/osp-ubuntu", keys)
	}
}
