package defaultosps

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// cloudInitOSPs are the profiles whose bootstrap applies the provisioning
// config with cloud-init.
var cloudInitOSPs = []string{"osp-ubuntu", "osp-rhel", "osp-rockylinux", "osp-amzn2"}

// TestBootstrapRuns runs the bootstrap script of every cloud-init profile in
// a sandbox, with systemctl, cloud-init and curl as stubs, on AWS, Azure and
// Hetzner, with systemd-resolved running (Ubuntu) or absent (EL9, Amazon
// Linux 2), and with cloud-init's --file before and after 24.1. It must post
// the MachineJoin of its machine, keep the kubelet's bootstrap kubeconfig of
// the answer, apply the answer's config with the network stage only (never `init --local`, which
// races NetworkManager for the NIC on EL on Azure), with no datasource, and
// must not die on a systemd-resolved that is not there.
func TestBootstrapRuns(t *testing.T) {
	requireSandbox(t)
	requireTools(t, "base64", "sed", "tr")
	const provisioning = "#cloud-config\nwrite_files: []\n"
	const cfg = "/etc/cloud/cloud.cfg.d/90-osm-provisioning.cfg"
	const rerunCfg = "/etc/cloud/cloud.cfg.d/91-osm-rerun.cfg"
	for _, name := range cloudInitOSPs {
		for _, cloud := range []string{"aws", "azure", "hetzner"} {
			r := renderOSP(t, name, cloud, "", nil)
			script := r.bootstrap["/opt/bin/osm-bootstrap"]
			for _, resolved := range []string{"active", "absent"} {
				for _, cli := range []string{"24.1", "22.4"} {
					t.Run(fmt.Sprintf("%s/%s/resolved-%s/cloud-init-%s", name, cloud, resolved, cli), func(t *testing.T) {
						s := newSandbox(t)
						s.prepare = "mkdir -p /etc/cloud/cloud.cfg.d /etc/osm && echo " + testMachine + " >/etc/osm/machine-name"
						s.env = []string{
							"OSM_TEST_RESOLVED=" + resolved,
							"OSM_TEST_CLI=" + cli,
							"OSM_TEST_BODY=" + base64.StdEncoding.EncodeToString([]byte(provisioning)),
						}
						s.stub("systemctl", `case "$1" in
  is-active) [ "$OSM_TEST_RESOLVED" = active ] && [ "${*: -1}" = systemd-resolved ] && exit 0; echo inactive; exit 3 ;;
  restart) if [ "$2" = systemd-resolved ] && [ "$OSM_TEST_RESOLVED" != active ]; then
      echo "Failed to restart systemd-resolved.service: Unit systemd-resolved.service not found." >&2; exit 5
    fi ;;
esac`)
						s.stub("cloud-init", `if [[ " $* " == *" --help "* ]]; then
  if [ "$OSM_TEST_CLI" = 24.1 ]; then echo "usage: cloud-init init [-h] [--local] [--file FILE]"; else echo "usage: cloud-init init [-h] [--local]"; fi
fi`)
						s.stub("curl", machineJoinCurl)
						run := s.run(t, script)
						if run.err != nil {
							t.Fatalf("osm-bootstrap: %v\n%s\ncalls:\n%s", run.err, run.out, strings.Join(run.calls, "\n"))
						}
						checkMachineJoin(t, run)
						if _, ok := run.changed("/var/lib/osm/bootstrap.done"); !ok {
							t.Error("osm-bootstrap did not write its marker")
						}
						if got, _ := run.changed(cfg); got != provisioning {
							t.Errorf("%s = %q, want the fetched config", cfg, got)
						}
						if len(run.called("systemctl enable --now --no-block osm-setup.service")) != 1 {
							t.Errorf("osm-bootstrap did not start osm-setup.service; calls:\n%s", strings.Join(run.calls, "\n"))
						}
						checkRerun(t, run, cfg, rerunCfg)
						restarts := run.called("systemctl restart systemd-resolved")
						switch {
						case cloud != "hetzner" && len(restarts) > 0:
							t.Errorf("systemd-resolved restarted on %s", cloud)
						case cloud == "hetzner" && resolved == "active" && len(restarts) != 1:
							t.Errorf("fallback DNS written but systemd-resolved not restarted; calls:\n%s", strings.Join(run.calls, "\n"))
						case cloud == "hetzner" && resolved == "absent" && len(restarts) > 0:
							t.Errorf("systemd-resolved restarted where it does not run")
						}
					})
				}
			}
		}
	}
}

// checkRerun checks the cloud-init calls of a bootstrap run: clean, then the
// network stage and both module stages, each with the rerun config (which
// selects no datasource) and the provisioning config.
func checkRerun(t *testing.T, run sandboxRun, cfg, rerunCfg string) {
	t.Helper()
	var stages []string
	for _, c := range run.called("cloud-init ") {
		args := strings.Fields(c)[1:]
		if slices.Contains(args, "--help") || args[0] == "status" || args[0] == "clean" {
			continue
		}
		var files, rest []string
		for i := 0; i < len(args); i++ {
			if args[i] == "--file" && i+1 < len(args) {
				files = append(files, args[i+1])
				i++
				continue
			}
			rest = append(rest, args[i])
		}
		stages = append(stages, strings.Join(rest, " "))
		if !slices.Equal(files, []string{rerunCfg, cfg}) {
			t.Errorf("%q: --file %q, want the rerun config, then the provisioning config", c, files)
		}
	}
	if want := []string{"init", "modules --mode config", "modules --mode final"}; !slices.Equal(stages, want) {
		t.Errorf("cloud-init stages %q, want %q", stages, want)
	}
	if len(run.called("cloud-init clean")) != 1 {
		t.Error("cloud-init clean was not run")
	}
	raw, _ := run.changed(rerunCfg)
	var rerun struct {
		Network        map[string]any `json:"network"`
		SSHDeleteKeys  *bool          `json:"ssh_deletekeys"`
		DatasourceList []string       `json:"datasource_list"`
	}
	if err := yaml.Unmarshal([]byte(raw), &rerun); err != nil {
		t.Fatalf("%s: %v: %q", rerunCfg, err, raw)
	}
	if rerun.Network["config"] != "disabled" || rerun.SSHDeleteKeys == nil || *rerun.SSHDeleteKeys ||
		!slices.Equal(rerun.DatasourceList, []string{"None"}) {
		t.Errorf("%s = %q, want networking and host keys kept and datasource_list [None]", rerunCfg, raw)
	}
}

// TestBootstrapAppliesConfigWithCloudInit runs the bootstrap of every
// cloud-init profile (rendered for Azure, where v0.1.0 ran the local stage)
// with Debian's real cloud-init, the version the node test's image has, in the
// sandbox; only curl (which answers the MachineJoin with the real provisioning
// payload), systemctl
// and `cloud-init status` are stubs. Although ds-identify listed only Azure,
// the rerun must find the None datasource and write every file of the
// provisioning payload, and its runcmd must start osm-setup.service.
func TestBootstrapAppliesConfigWithCloudInit(t *testing.T) {
	requireSandbox(t)
	requireTools(t, "cloud-init")
	for _, name := range cloudInitOSPs {
		t.Run(name, func(t *testing.T) {
			r := renderOSP(t, name, "azure", "IPv4+IPv6", nil)
			s := newSandbox(t)
			payload := base64.StdEncoding.EncodeToString(r.res.Provisioning.UserData)
			if err := os.WriteFile(filepath.Join(s.dir, "payload.b64"), []byte(payload), 0o600); err != nil {
				t.Fatal(err)
			}
			// The image's own settings: never grow or resize the host's disk.
			// And what ds-identify writes on an EL image on Azure: a list
			// without None, which only the rerun's --file overrides.
			s.prepare = `mkdir -p /etc/cloud/cloud.cfg.d /run/cloud-init /etc/osm
echo ` + testMachine + ` >/etc/osm/machine-name
printf 'growpart: {mode: "off"}\nresize_rootfs: false\n' >/etc/cloud/cloud.cfg.d/00-osm-test.cfg
printf 'datasource_list: [ Azure ]\n' >/run/cloud-init/cloud.cfg`
			s.stub("curl", machineJoinCurl)
			s.stub("systemctl", "")
			s.stub("cloud-init", `[ "$1" = status ] && exit 0
exec /usr/bin/cloud-init "$@"`)
			run := s.run(t, r.bootstrap["/opt/bin/osm-bootstrap"])
			if run.err != nil {
				t.Fatalf("osm-bootstrap: %v\n%s", run.err, run.out)
			}
			if id, _ := run.changed("/var/lib/cloud/data/instance-id"); strings.TrimSpace(id) != "iid-datasource-none" {
				t.Errorf("cloud-init ran as instance %q, want the None datasource's iid-datasource-none\n%s", id, run.out)
			}
			for path, want := range r.provisioning {
				if got, ok := run.changed(path); !ok || got != want {
					t.Errorf("cloud-init did not write %s as the provisioning payload has it (written: %v)", path, ok)
				}
			}
			// One start from the payload's runcmd, one from osm-bootstrap.
			if n := len(run.called("systemctl enable --now --no-block osm-setup.service")); n != 2 {
				t.Errorf("osm-setup.service started %d times, want 2 (runcmd, bootstrap); calls:\n%s", n, strings.Join(run.calls, "\n"))
			}
		})
	}
}

// testMachine is the machine a sandboxed bootstrap boots as: machine-controller
// would have written its name into /etc/osm/machine-name.
const testMachine = "pool-5d8f7-x2k4q"

// testKubeconfig is the kubelet bootstrap kubeconfig machineJoinCurl answers.
const testKubeconfig = "apiVersion: v1\nkind: Config\n"

// machineJoinCurl is a curl stub answering a MachineJoin as osm-apiserver
// does: 201, and the answer, with the provisioning payload of $OSM_TEST_BODY
// (base64; else /osm-test/payload.b64) and testKubeconfig, in the file of -o.
var machineJoinCurl = `out=/dev/stdout
body=${OSM_TEST_BODY:-$(cat /osm-test/payload.b64)}
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
printf '{"kind":"MachineJoin","apiVersion":"osm.k8c.io/v1alpha1","metadata":{"name":"` + testMachine + `"},` +
	`"status":{"kubeconfig":"` + base64.StdEncoding.EncodeToString([]byte(testKubeconfig)) + `","expirationTimestamp":"2026-11-25T11:00:00Z",` +
	`"provisioning":"%s","provisioningFormat":"cloud-init",` +
	`"profile":{"namespace":"kube-system","name":"osp-test","version":"v1.6.0"},"machineDeploymentRevision":"7"}}\n' "$body" >"$out"
printf 201`

// bootSecretRE is what the bootstrap's boot secret must look like: 128
// random bits in hex, as the MachineJoin's validation takes them.
var bootSecretRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// checkBootSecret checks that every MachineJoin of a run sends the boot's
// secret, kept in /run (gone at the next boot) where only root reads it.
func checkBootSecret(t *testing.T, run sandboxRun, calls []string) {
	t.Helper()
	secret, _ := run.changed("/run/osm/boot-secret")
	if !bootSecretRE.MatchString(secret) {
		t.Fatalf("/run/osm/boot-secret = %q, want 32 random hex digits", secret)
	}
	if mode, ok := run.mode("/run/osm/boot-secret"); !ok || mode&0o077 != 0 {
		t.Errorf("/run/osm/boot-secret has mode %o, want none for group and others", mode)
	}
	for i, call := range calls {
		if !strings.Contains(call, `"bootSecret":"`+secret+`"`) {
			t.Errorf("MachineJoin %d %q does not send the boot secret %s", i+1, call, secret)
		}
	}
}

// A MachineJoin whose answer was lost is asked again with the same boot
// secret: osm-apiserver answers the same machine again only for it.
func TestBootstrapAsksAgainWithItsSecret(t *testing.T) {
	requireSandbox(t)
	requireTools(t, "base64", "sed", "tr", "od")
	const provisioning = "#cloud-config\nwrite_files: []\n"
	for _, name := range cloudInitOSPs {
		t.Run(name, func(t *testing.T) {
			r := renderOSP(t, name, "aws", "", nil)
			s := newSandbox(t)
			s.prepare = "mkdir -p /etc/cloud/cloud.cfg.d /etc/osm && echo " + testMachine + " >/etc/osm/machine-name"
			s.env = []string{"OSM_TEST_BODY=" + base64.StdEncoding.EncodeToString([]byte(provisioning))}
			s.stub("systemctl", "exit 0")
			s.stub("cloud-init", "exit 0")
			s.stub("sleep", "exit 0")
			// The first answer is lost on the way (a 503 of an API server restarting).
			s.stub("curl", `n=$(cat /var/tmp/osm-test-curls 2>/dev/null || echo 0)
echo $((n + 1)) >/var/tmp/osm-test-curls
if [ "$n" = 0 ]; then printf 503; exit 0; fi
`+machineJoinCurl)
			run := s.run(t, r.bootstrap["/opt/bin/osm-bootstrap"])
			if run.err != nil {
				t.Fatalf("osm-bootstrap: %v\n%s", run.err, run.out)
			}
			calls := run.called("curl ")
			if len(calls) != 2 {
				t.Fatalf("curl calls %q, want the MachineJoin twice", calls)
			}
			checkBootSecret(t, run, calls)
		})
	}
}

// checkMachineJoin checks the MachineJoin of a bootstrap run: one POST to
// the machinejoins of the MD's namespace, over TLS verified against the
// cluster CA, with the fetch token, naming the machine and the boot; the
// kubelet's bootstrap kubeconfig of the answer is kept, the answer is not.
func checkMachineJoin(t *testing.T, run sandboxRun) {
	t.Helper()
	calls := run.called("curl ")
	if len(calls) != 1 {
		t.Fatalf("curl calls %q, want one MachineJoin", calls)
	}
	for _, want := range []string{"--cacert ", "-H @/etc/osm/report-auth ", serverURL + "/apis/osm.k8c.io/v1alpha1/namespaces/",
		"/machinejoins", `"kind":"MachineJoin"`, `"machineName":"` + testMachine + `"`, `"bootID":"`} {
		if !strings.Contains(calls[0], want) {
			t.Errorf("the MachineJoin %q does not contain %q", calls[0], want)
		}
	}
	checkBootSecret(t, run, calls)
	// The fetch token goes to curl (and to osm-report) in a file only root reads.
	if got, _ := run.changed("/etc/osm/report-auth"); got != "Authorization: Bearer "+fetchToken+"\n" {
		t.Errorf("/etc/osm/report-auth = %q, want the fetch token's Authorization header", got)
	}
	if mode, ok := run.mode("/etc/osm/report-auth"); !ok || mode&0o077 != 0 {
		t.Errorf("/etc/osm/report-auth has mode %o, want none for group and others", mode)
	}
	// osm-report reports to the MD's namespace, for this machine, over the verified TLS.
	env, _ := run.changed("/etc/osm/report.env")
	for _, want := range []string{"OSM_REPORT_SERVER=" + serverURL + "\n", "OSM_REPORT_CA=/", "OSM_REPORT_TOKEN_FILE=/etc/osm/report-auth\n",
		"OSM_REPORT_NAMESPACE=kube-system\n", "OSM_REPORT_MACHINE=" + testMachine + "\n",
		// What the answer's payload was rendered from: osm-report sends it with every step.
		"OSM_REPORT_PROFILE=osp-test\n", "OSM_REPORT_PROFILE_VERSION=v1.6.0\n", "OSM_REPORT_REVISION=7\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("/etc/osm/report.env = %q, want %q in it", env, want)
		}
	}
	if got, _ := run.changed("/var/lib/osm/payload-fetched"); len(strings.Fields(got)) != 2 {
		t.Errorf("/var/lib/osm/payload-fetched = %q, want the uptimes before and after the MachineJoin", got)
	}
	if got, _ := run.changed("/etc/kubernetes/bootstrap-kubelet.conf"); got != testKubeconfig {
		t.Errorf("bootstrap-kubelet.conf = %q, want the answer's kubeconfig", got)
	}
	if got, _ := run.changed("/etc/osm/provisioned-with.env"); !strings.Contains(got, "OSM_REPORT_REVISION=7\n") {
		t.Errorf("/etc/osm/provisioned-with.env = %q: later boots would report no revision", got)
	}
	if _, kept := run.changed("/var/lib/osm/machine-join.json"); kept {
		t.Error("the answer (a credential) was left on disk")
	}
}
