package defaultosps

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEdgeJoinScript runs the join script of an edge MachineDeployment in a
// sandbox, with curl and cloud-init as stubs: it carries the MD's bootstrap
// payload (osp-ubuntu posts a MachineJoin), fetches nothing itself, puts the
// machine's name (OSM_MACHINE_NAME, or OSM_NODE_NAME) where machine-controller
// would, applies the config with cloud-init under that name (not the MD's),
// refuses a name that is none, and does nothing when run again.
func TestEdgeJoinScript(t *testing.T) {
	requireSandbox(t)
	requireTools(t, "base64", "sed", "tr", "flock", "shellcheck")
	r := renderOSP(t, "osp-ubuntu", "edge", "", nil)
	if r.res.EdgeScript == nil {
		t.Fatal("no join script for an edge MachineDeployment")
	}
	script := string(r.res.EdgeScript.UserData)
	for _, forbidden := range []string{"curl -k", "--insecure", " -k "} {
		if strings.Contains(script, forbidden) {
			t.Errorf("the join script uses %q", forbidden)
		}
	}
	path := filepath.Join(t.TempDir(), "fetch-bootstrap-script")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("shellcheck", "-s", "bash", path).CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
	if other := renderOSP(t, "osp-ubuntu", "aws", "", nil); other.res.EdgeScript != nil {
		t.Error("a join script for an aws MachineDeployment")
	}
	if strings.Contains(script, "/secrets/") || !strings.Contains(script, base64.StdEncoding.EncodeToString(r.res.Bootstrap.UserData)) {
		t.Error("the join script fetches a Secret instead of carrying the bootstrap payload")
	}

	stubs := func(s *sandbox, env ...string) {
		s.prepare = "mkdir -p /etc/cloud/cloud.cfg.d"
		s.env = env
		s.stub("cloud-init", `if [[ " $* " == *" --help "* ]]; then echo "usage: cloud-init init [-h] [--local] [--file FILE]"; fi`)
		s.stub("curl", `exit 7`)
	}
	bad := newSandbox(t)
	stubs(bad, "OSM_MACHINE_NAME=Edge 7")
	if run := bad.run(t, script); run.err == nil || !strings.Contains(run.out, "no valid node name") {
		t.Errorf("a name that is none: %v, %q", run.err, run.out)
	}
	s := newSandbox(t)
	stubs(s, "OSM_NODE_NAME=ignored", "OSM_MACHINE_NAME=Edge-7")
	run := s.run(t, script)
	if run.err != nil {
		t.Fatalf("join script: %v\n%s\ncalls:\n%s", run.err, run.out, strings.Join(run.calls, "\n"))
	}
	if curl := run.called("curl "); len(curl) != 0 {
		t.Errorf("the join script called curl: %q", curl)
	}
	if ca, _ := run.changed("/etc/kubernetes/pki/ca.crt"); strings.TrimSpace(ca) != strings.TrimSpace(r.provisioning["/etc/kubernetes/pki/ca.crt"]) {
		t.Errorf("the CA written is %q", ca)
	}
	cfg, _ := run.changed("/etc/cloud/cloud.cfg.d/90-osm-edge-bootstrap.cfg")
	if !strings.Contains(cfg, "osm-bootstrap") || strings.Contains(cfg, "\nhostname:") {
		t.Errorf("applied config: %.300q, want the bootstrap payload without its MD hostname", cfg)
	}
	if strings.Contains(cfg, "MACHINE_NAME") || !strings.Contains(cfg, "edge-7") {
		t.Errorf("applied config: the machine's name is not where machine-controller would put it:\n%s", cfg)
	}
	if rerun, _ := run.changed("/etc/cloud/cloud.cfg.d/91-osm-edge-rerun.cfg"); !strings.Contains(rerun, "hostname: edge-7") || !strings.Contains(rerun, "datasource_list: [ None ]") {
		t.Errorf("rerun config %q", rerun)
	}
	if name, _ := run.changed("/etc/machine-name"); name != "edge-7\n" {
		t.Errorf("/etc/machine-name = %q, want this machine's name", name)
	}
	for _, stage := range []string{"cloud-init clean", "cloud-init init --file", "cloud-init modules --mode config --file", "cloud-init modules --mode final --file"} {
		if len(run.called(stage)) != 1 {
			t.Errorf("no %q; calls:\n%s", stage, strings.Join(run.calls, "\n"))
		}
	}
	if _, ok := run.changed("/var/lib/osm/edge-join.done"); !ok {
		t.Error("no marker written")
	}

	// Again, on a machine that has joined: nothing is fetched or applied.
	again := newSandbox(t)
	stubs(again)
	again.prepare += " && mkdir -p /var/lib/osm && touch /var/lib/osm/edge-join.done"
	run = again.run(t, script)
	if run.err != nil || len(run.calls) != 0 || !strings.Contains(run.out, "nothing to do") {
		t.Errorf("second run: %v, calls %q, output %q", run.err, run.calls, run.out)
	}
}
