package defaultosps

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// TestFlatcarCloudConfigStartsWithoutWaiting: coreos-cloudinit starts every
// unit it enables (command: start) and waits for the start job. The outer
// run (the user-data) and osm-bootstrap's own run of the provisioning config
// must not wait for the bootstrap or the setup, which run until the node is
// set up: no unit coreos-cloudinit starts may run them or wait for anything,
// and something must start both without waiting.
func TestFlatcarCloudConfigStartsWithoutWaiting(t *testing.T) {
	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(osps, func(o *ospv1alpha1.OperatingSystemProfile) bool { return o.Name == "osp-flatcar-cloud-init" })
	if i < 0 {
		t.Fatal("no osp-flatcar-cloud-init")
	}
	var clouds []string
	for _, c := range osps[i].Spec.SupportedCloudProviders {
		clouds = append(clouds, string(c.Name))
	}
	// Not boot-tested: the clouds where cloud-config is how Flatcar is
	// provisioned; the others use osp-flatcar (docs/default-osps.md).
	if want := []string{"anexia"}; !slices.Equal(clouds, want) {
		t.Errorf("osp-flatcar-cloud-init supports %q, want %q", clouds, want)
	}
	for _, cloud := range clouds {
		r := renderOSP(t, "osp-flatcar-cloud-init", cloud, "", nil)
		started := map[string]bool{} // units started with --no-block by a started unit
		for _, payload := range []struct {
			name string
			p    render.Payload
		}{{"bootstrap", r.res.Bootstrap}, {"provisioning", r.res.Provisioning}} {
			var cc struct {
				CoreOS struct {
					Units []struct {
						Name    string `json:"name"`
						Enable  bool   `json:"enable"`
						Command string `json:"command"`
						Content string `json:"content"`
					} `json:"units"`
				} `json:"coreos"`
			}
			if err := yaml.Unmarshal(payload.p.UserData, &cc); err != nil {
				t.Fatalf("%s: %s payload: %v", cloud, payload.name, err)
			}
			for _, u := range cc.CoreOS.Units {
				if u.Command == "" {
					continue
				}
				for _, problem := range waitingUnitProblems(u.Content) {
					t.Errorf("%s: %s payload: coreos-cloudinit runs %q (command: %s) and waits: %s", cloud, payload.name, u.Name, u.Command, problem)
				}
				for _, line := range strings.Split(u.Content, "\n") {
					f := strings.Fields(strings.TrimPrefix(line, "ExecStart="))
					if strings.HasPrefix(line, "ExecStart=") && slices.Contains(f, "--no-block") {
						started[f[len(f)-1]] = true
					}
				}
			}
		}
		if !started["osm-bootstrap.service"] {
			t.Errorf("%s: no unit coreos-cloudinit starts starts osm-bootstrap.service without waiting", cloud)
		}
		if !strings.Contains(r.bootstrap["/opt/bin/osm-bootstrap"], "systemctl enable --now --no-block osm-setup.service") {
			t.Errorf("%s: osm-bootstrap does not start osm-setup.service without waiting", cloud)
		}
	}
}

// waitingUnitProblems returns why starting a unit could keep its starter
// waiting: the unit must be a oneshot without default dependencies (no
// ordering to wait for) whose every command is a systemctl that does not wait.
func waitingUnitProblems(unit string) []string {
	var problems []string
	for _, want := range []string{"DefaultDependencies=no", "Type=oneshot"} {
		if !slices.Contains(strings.Split(unit, "\n"), want) {
			problems = append(problems, "no "+want)
		}
	}
	for _, line := range strings.Split(unit, "\n") {
		switch {
		case strings.HasPrefix(line, "After="), strings.HasPrefix(line, "Requires="):
			problems = append(problems, line)
		case strings.HasPrefix(line, "ExecStart"):
			cmd := strings.Fields(strings.SplitN(line, "=", 2)[1])
			quick := len(cmd) > 2 && cmd[0] == "/usr/bin/systemctl" &&
				(cmd[1] == "start" && slices.Contains(cmd, "--no-block") || cmd[1] == "enable" && slices.Contains(cmd, "--no-reload") && !slices.Contains(cmd, "--now"))
			if !quick {
				problems = append(problems, line)
			}
		}
	}
	return problems
}
