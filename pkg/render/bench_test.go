package render_test

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// benchInput is the ubuntu-aws-containerd case, or the flatcar default OSP on
// AWS for Flatcar.
func benchInput(b testing.TB, flatcar bool) render.Input {
	b.Helper()
	up := upstreamDir(b)
	in := caseInput(b, filepath.Join(up, "cases", "ubuntu-aws-containerd"))
	if flatcar {
		in.OSP = decodeFile(b, filepath.Join(up, "deploy", "osps", "default", "osp-flatcar.yaml"), render.DecodeOSP)
		in.MachineDeployment = machineDeploymentFor(b, in.MachineDeployment, "flatcar", "aws")
	}
	// As from an informer: revisions are keyed by uid and resourceVersion.
	in.OSP.UID, in.OSP.ResourceVersion = "8f7d3c1e-bench", "1"
	return in
}

// benchmarkRender renders both payloads; first parses the OSP every time (a new
// Renderer per iteration), warm renders a new MachineDeployment each time
// against an OSP parsed before the timer started.
func benchmarkRender(b *testing.B, flatcar, first bool) {
	in := benchInput(b, flatcar)
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

func BenchmarkRenderUbuntuFirst(b *testing.B)  { benchmarkRender(b, false, true) }
func BenchmarkRenderUbuntuWarm(b *testing.B)   { benchmarkRender(b, false, false) }
func BenchmarkRenderFlatcarFirst(b *testing.B) { benchmarkRender(b, true, true) }
func BenchmarkRenderFlatcarWarm(b *testing.B)  { benchmarkRender(b, true, false) }
