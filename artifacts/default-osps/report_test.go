package defaultosps

import (
	"os"
	"path/filepath"
	"slices"
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
		r := renderFiles(t, osp.Name, string(osp.Spec.SupportedCloudProviders[0].Name))
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

// renderFiles renders a default profile for cloud and has the files of both
// payloads, cloud-config or Ignition.
func renderFiles(t *testing.T, name, cloud string) rendered {
	t.Helper()
	r := renderOSP(t, name, cloud, "", nil)
	if r.res.Provisioning.Format != osm.PayloadFormatIgnition {
		return r
	}
	for _, p := range []struct {
		payload render.Payload
		into    *map[string]string
	}{{r.res.Bootstrap, &r.bootstrap}, {r.res.Provisioning, &r.provisioning}} {
		files, err := ignitionFiles(p.payload.UserData)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		*p.into = filesByPath(files)
	}
	return r
}

// TestSetupRetriesFromTheFailedStep runs every default profile's osm-setup as
// osm-setup.service does (again after a failure) with an osm-report whose
// container-runtime fails once and kubelet-binaries once after it: each retry
// must start at the failed step, never run a step that succeeded in this boot
// again, and end with the final step.
func TestSetupRetriesFromTheFailedStep(t *testing.T) {
	requireSandbox(t)
	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	// The unit's loop, bounded; the failures are remembered in /tmp, which a
	// run keeps (a reboot is another sandbox run).
	const unit = `for attempt in 1 2 3 4; do
  if bash /osm-test/osm-setup; then echo "osm-setup: done after $attempt attempts"; exit 0; fi
done
exit 1
`
	const report = `[ "$1" = run ] || exit 0
shift
[ "$1" = --final ] && shift
case $1 in
  container-runtime | kubelet-binaries)
    if [ ! -e "/tmp/failed-$1" ]; then touch "/tmp/failed-$1"; exit 1; fi ;;
esac
exit 0`
	want := []string{
		"osm-report run packages", "osm-report run container-runtime", // fails
		"osm-report run container-runtime", "osm-report run kubelet-binaries", // fails
		"osm-report run kubelet-binaries", "osm-report run kubelet-configured", "osm-report run --final kubelet-started",
	}
	for _, osp := range osps {
		t.Run(osp.Name, func(t *testing.T) {
			setup := renderFiles(t, osp.Name, string(osp.Spec.SupportedCloudProviders[0].Name)).provisioning["/opt/bin/osm-setup"]
			if setup == "" {
				t.Fatal("the provisioning payload has no /opt/bin/osm-setup")
			}
			s := newSandbox(t)
			if err := os.WriteFile(filepath.Join(s.dir, "osm-setup"), []byte(setup), 0o700); err != nil {
				t.Fatal(err)
			}
			s.prepare = "mkdir -p /opt/bin /var/lib/osm && ln -sf /osm-test/stubs/osm-report /opt/bin/osm-report"
			s.stub("osm-report", report)
			run := s.run(t, unit)
			if run.err != nil {
				t.Fatalf("osm-setup did not succeed in 4 attempts: %v\n%s\ncalls:\n%s", run.err, run.out, strings.Join(run.calls, "\n"))
			}
			var got []string
			for _, c := range run.called("osm-report run") {
				// "osm-report run [--final] STEP -- /osm-test/osm-setup STEP": the part before "--".
				before, _, _ := strings.Cut(c, " -- ")
				got = append(got, before)
			}
			if !slices.Equal(got, want) {
				t.Errorf("osm-report calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if _, ok := run.changed("/var/lib/osm/setup.done"); !ok {
				t.Error("osm-setup did not write /var/lib/osm/setup.done")
			}
		})
	}
}

// TestSpoolIsFlushedAtBoot: every default profile installs
// osm-report-flush.service, which sends the records the spool kept across a
// reboot without holding the boot up, and its osm-setup enables it, so a
// final record a reboot interrupted is sent once nothing else reports.
func TestSpoolIsFlushedAtBoot(t *testing.T) {
	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	const unit = "osm-report-flush.service"
	for _, osp := range osps {
		var content string
		for _, f := range osp.Spec.ProvisioningConfig.Files {
			if f.Path == "/etc/systemd/system/"+unit {
				content = f.Content.Inline.Data
			}
		}
		for _, u := range osp.Spec.ProvisioningConfig.Units {
			if u.Name == unit && u.Content != nil {
				content = *u.Content
			}
		}
		if content == "" {
			t.Errorf("%s: no %s in the provisioning config", osp.Name, unit)
			continue
		}
		for _, want := range []string{"\nType=simple\n", "\nExecStart=/opt/bin/osm-report flush --wait\n", "\nAfter=network-online.target\n", "\nWantedBy=multi-user.target\n"} {
			if !strings.Contains(content, want) {
				t.Errorf("%s: %s lacks %q", osp.Name, unit, strings.TrimSpace(want))
			}
		}
		r := renderFiles(t, osp.Name, string(osp.Spec.SupportedCloudProviders[0].Name))
		if !strings.Contains(r.provisioning["/opt/bin/osm-setup"], "\nsystemctl enable "+unit+" ") {
			t.Errorf("%s: osm-setup does not enable %s", osp.Name, unit)
		}
	}
}
