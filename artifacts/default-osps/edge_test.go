package defaultosps

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// TestEdgeJoinScript runs the join script of an edge MachineDeployment in a
// sandbox, with curl and cloud-init as stubs: it must fetch the MD's bootstrap
// Secret over TLS verified against the CA it carries, with the MD's token
// (never -k), apply the fetched config with cloud-init under this machine's
// name (not the MD's), and do nothing when run again.
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

	bootstrap := string(r.res.Bootstrap.UserData)
	stubs := func(s *sandbox) {
		s.prepare = "mkdir -p /etc/cloud/cloud.cfg.d"
		s.env = []string{"OSM_TEST_BODY=" + base64.StdEncoding.EncodeToString([]byte(bootstrap)), "OSM_NODE_NAME=Edge-7"}
		s.stub("cloud-init", `if [[ " $* " == *" --help "* ]]; then echo "usage: cloud-init init [-h] [--local] [--file FILE]"; fi`)
		s.stub("curl", `printf '{"kind":"Secret","data":{"cloud-config":"%s"}}' "$OSM_TEST_BODY"`)
	}
	s := newSandbox(t)
	stubs(s)
	run := s.run(t, script)
	if run.err != nil {
		t.Fatalf("join script: %v\n%s\ncalls:\n%s", run.err, run.out, strings.Join(run.calls, "\n"))
	}
	curl := run.called("curl ")
	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	md := machineDeployment(t, osps[slices.IndexFunc(osps, func(o *ospv1alpha1.OperatingSystemProfile) bool { return o.Name == "osp-ubuntu" })], "edge", "")
	wantURL := "/api/v1/namespaces/cloud-init-settings/secrets/" + machinecontroller.SecretName(md.Name, md.Namespace, "bootstrap")
	if len(curl) != 1 || !strings.Contains(curl[0], "--cacert /etc/kubernetes/pki/ca.crt") ||
		!strings.Contains(curl[0], "Authorization: Bearer "+renderInput(testCA(t), false).Cluster.CloudInitGetterToken) ||
		!strings.Contains(curl[0], wantURL) {
		t.Errorf("curl calls %q, want one to %s with the CA and the MD's token", curl, wantURL)
	}
	if ca, _ := run.changed("/etc/kubernetes/pki/ca.crt"); strings.TrimSpace(ca) != strings.TrimSpace(r.provisioning["/etc/kubernetes/pki/ca.crt"]) {
		t.Errorf("the CA written is %q", ca)
	}
	cfg, _ := run.changed("/etc/cloud/cloud.cfg.d/90-osm-edge-bootstrap.cfg")
	if !strings.Contains(cfg, "osm-bootstrap") || strings.Contains(cfg, "\nhostname:") {
		t.Errorf("applied config: %.300q, want the bootstrap payload without its MD hostname", cfg)
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
