package render_test

import (
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// benchOverlays are three overlays as docs/overlays.md's examples: a CA with
// a drop-in, a sysctl whose content is a template, a unit.
func benchOverlays() []*overlaysv1alpha1.OperatingSystemProfileOverlay {
	overlay := func(name string, cfg overlaysv1alpha1.OverlayConfig) *overlaysv1alpha1.OperatingSystemProfileOverlay {
		o := &overlaysv1alpha1.OperatingSystemProfileOverlay{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name, UID: types.UID("bench-overlay-" + name), Generation: 1}}
		o.Spec.Profiles, o.Spec.ProvisioningConfig = []string{"osp-ubuntu"}, cfg
		return o
	}
	file := func(path, data string) ospv1alpha1.File {
		return ospv1alpha1.File{Path: path, Content: ospv1alpha1.FileContent{Inline: &ospv1alpha1.FileContentInline{Data: data}}}
	}
	unit := "[Unit]\nDescription=Disable transparent huge pages\n[Service]\nType=oneshot\nExecStart=/bin/sh -c 'echo never >/sys/kernel/mm/transparent_hugepage/enabled'\n[Install]\nWantedBy=multi-user.target\n"
	return []*overlaysv1alpha1.OperatingSystemProfileOverlay{
		overlay("10-ca", overlaysv1alpha1.OverlayConfig{
			Files:   []ospv1alpha1.File{file("/usr/local/share/ca-certificates/company-ca.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")},
			DropIns: []overlaysv1alpha1.UnitDropIn{{Unit: "osm-setup.service", Name: "10-ca.conf", Content: "[Service]\nExecStartPre=/usr/sbin/update-ca-certificates\n"}},
		}),
		overlay("20-sysctl", overlaysv1alpha1.OverlayConfig{Files: []ospv1alpha1.File{
			file("/etc/sysctl.d/95-inotify.conf", "fs.inotify.max_user_instances = {{ if .MaxPods }}8192{{ else }}1024{{ end }}\n")}}),
		overlay("30-unit", overlaysv1alpha1.OverlayConfig{Units: []ospv1alpha1.Unit{{Name: "disable-thp.service", Enable: ptrTo(true), Content: &unit}}}),
	}
}

func ptrTo[T any](v T) *T { return &v }

// benchmarkRenderOverlays is benchmarkRender's Ubuntu case with the three
// overlays: first parses the OSP and overlays every time, warm renders a new
// MachineDeployment each time against a parse made before.
func benchmarkRenderOverlays(b *testing.B, first bool) {
	in := benchInput(b, false)
	in.Overlays = benchOverlays()
	mds := make([]render.Input, 64)
	for i := range mds {
		mds[i] = in
		md := in.MachineDeployment.DeepCopy()
		md.Name += "-" + strconv.Itoa(i)
		mds[i].MachineDeployment = md
	}
	r := render.NewRenderer()
	if _, err := r.Render(in); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if first {
			r = render.NewRenderer()
		}
		res, err := r.Render(mds[i%len(mds)])
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(res.Bootstrap.UserData) + len(res.Provisioning.UserData)))
	}
}

func BenchmarkRenderUbuntuFirstOverlays(b *testing.B) { benchmarkRenderOverlays(b, true) }
func BenchmarkRenderUbuntuWarmOverlays(b *testing.B)  { benchmarkRenderOverlays(b, false) }
