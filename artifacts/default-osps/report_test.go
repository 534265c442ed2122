package defaultosps

import (
	"strings"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/artifacts/osmreport"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// reportedSteps are the steps every default profile reports, in order; the
// last one ends provisioning.
var reportedSteps = []string{"payload-fetched", "packages", "container-runtime", "kubelet-binaries", "kubelet-configured", "kubelet-started"}

// TestOSMReportIsTheHelper: every default profile installs osm-report as
// artifacts/osmreport has it (the tested helper), and its osm-setup runs
// every step under it, the last one with --final, so the machine's BootReport
// shows each step and turns Succeeded with the last.
func TestOSMReportIsTheHelper(t *testing.T) {
	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, osp := range osps {
		r := renderOSP(t, osp.Name, string(osp.Spec.SupportedCloudProviders[0].Name), "", nil)
		if r.res.Provisioning.Format == osm.PayloadFormatIgnition {
			for _, p := range []struct {
				payload render.Payload
				into    *map[string]string
			}{{r.res.Bootstrap, &r.bootstrap}, {r.res.Provisioning, &r.provisioning}} {
				files, err := ignitionFiles(p.payload.UserData)
				if err != nil {
					t.Fatalf("%s: %v", osp.Name, err)
				}
				*p.into = filesByPath(files)
			}
		}
		if got := r.provisioning["/opt/bin/osm-report"]; got != osmreport.Script {
			t.Errorf("%s: /opt/bin/osm-report differs from artifacts/osmreport/osm-report (copy it into the profile, indented)", osp.Name)
		}
		setup := r.provisioning["/opt/bin/osm-setup"]
		for _, want := range []string{
			`"$report" ok payload-fetched --duration`,
			"for step in " + strings.Join(reportedSteps[1:len(reportedSteps)-1], " ") + "; do\n",
			`  "$report" run "$step" -- "$0" "$step"`,
			`"$report" run --final kubelet-started -- "$0" kubelet-started`,
		} {
			if !strings.Contains(setup, want) {
				t.Errorf("%s: osm-setup does not contain %q", osp.Name, want)
			}
		}
		for _, step := range reportedSteps[1:] {
			if !strings.Contains(setup, "\n"+strings.ReplaceAll(step, "-", "_")+"() {\n") {
				t.Errorf("%s: osm-setup has no step %s", osp.Name, step)
			}
		}
		bootstrap := r.bootstrap["/opt/bin/osm-bootstrap"]
		for _, want := range []string{">/etc/osm/report.env", ">/var/lib/osm/payload-fetched"} {
			if !strings.Contains(bootstrap, want) {
				t.Errorf("%s: osm-bootstrap does not contain %q", osp.Name, want)
			}
		}
	}
}
