package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
)

// hostileAnnotation holds, on every OSP of pkg/render/testdata/hostile, text
// the error of its render contains.
const hostileAnnotation = "test.osm.k8c.io/expect-error"

// hostileProfile returns pkg/render/testdata/hostile/<file>.yaml renamed to name.
func hostileProfile(t *testing.T, file, name string) *ospv1alpha1.OperatingSystemProfile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(env.repo, "pkg/render/testdata/hostile", file+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var osp ospv1alpha1.OperatingSystemProfile
	if err := yaml.Unmarshal(data, &osp); err != nil {
		t.Fatal(err)
	}
	osp.Name = name
	return &osp
}

// hostileError reports whether got is the error a hostile profile's render
// should fail with: want, or, on a loaded machine, the time budget instead
// of the limit want names.
func hostileError(got, want string) bool {
	const budget, timeout = "render budget exceeded: ", "render budget exceeded: took longer than"
	return strings.Contains(got, want) || strings.Contains(want, budget) && strings.Contains(got, timeout)
}

// serverPID is the pid of the harness's osm-apiserver; it fails the test if
// that process is gone.
func serverPID(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(env.dir, "run", "osm-apiserver.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("osm-apiserver (pid %d) is not running: %v", pid, err)
	}
	return pid
}

// TestHostileProfilesAreBounded: profiles that crashed the server, hung its
// LISTs and syncer, or read its environment (issue 9, items 1-3) fail the
// renders of their own MachineDeployments, soon, and nothing else: the
// process stays up, LISTs answer, other MDs sync, and a fixed profile renders
// without a restart.
func TestHostileProfilesAreBounded(t *testing.T) {
	ctx := testContext(t)
	pid := serverPID(t)
	ns := syncerNamespace(t)
	good := "e2e-budget-good-" + ns
	applyProfile(t, e2eProfile(t, good, "v1.0.0"))
	want := map[string]string{} // hostile MD → text of its error
	profiles := map[string]string{}
	for _, file := range []string{"repeat-oom", "nested-range", "fan-out", "self-dict-print", "slow-loop", "env"} {
		osp := hostileProfile(t, file, "e2e-hostile-"+file+"-"+ns)
		applyProfile(t, osp)
		profiles[file] = osp.Name
		// Two MDs each: the second must not wait for the budget again.
		for _, md := range []string{file + "-a", file + "-b"} {
			createMD(t, syncerMD(ns, md, osp.Name, "1"))
			want[md] = osp.Annotations[hostileAnnotation]
		}
	}
	createMD(t, syncerMD(ns, "good", good, "1"))

	var slowest time.Duration
	eventually(t, 2*time.Minute, func() error {
		start := time.Now()
		list, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).List(ctx, metav1.ListOptions{})
		slowest = max(slowest, time.Since(start))
		if err != nil {
			return err
		}
		if len(list.Items) != len(want)+1 {
			return fmt.Errorf("%d OSCs, want %d", len(list.Items), len(want)+1)
		}
		for _, osc := range list.Items {
			switch {
			case osc.Status.Pending != "":
				return fmt.Errorf("%s: pending: %s", osc.Name, osc.Status.Pending)
			case osc.Name == "good" && osc.Status.RenderError != "":
				return fmt.Errorf("good: %s", osc.Status.RenderError)
			case osc.Name != "good" && !hostileError(osc.Status.RenderError, want[osc.Name]):
				return fmt.Errorf("%s: render error %q, want it to contain %q", osc.Name, osc.Status.RenderError, want[osc.Name])
			}
		}
		return nil
	})
	t.Logf("slowest LIST with hostile profiles present: %s", slowest)
	if slowest > 5*time.Second {
		t.Errorf("a LIST took %s with hostile profiles present, want at most 5s", slowest)
	}
	// The syncer kept syncing and warned on the hostile MDs.
	payloadSecret(t, ns, "good", "provisioning", annotated("1", "v1.0.0"))
	eventually(t, time.Minute, func() error {
		for md := range want {
			events, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
				FieldSelector: "involvedObject.name=" + md + ",type=Warning,reason=RenderFailed"})
			if err != nil {
				return err
			}
			if len(events.Items) == 0 {
				return fmt.Errorf("no RenderFailed warning on %s yet", md)
			}
		}
		return nil
	})

	// Fixing a profile renders its MDs again, without a restart.
	applyProfile(t, e2eProfile(t, profiles["nested-range"], "v1.0.0"))
	payloadSecret(t, ns, "nested-range-a", "bootstrap", annotated("1", "v1.0.0"))
	if now := serverPID(t); now != pid {
		t.Errorf("osm-apiserver restarted: pid %d, was %d", now, pid)
	}
}
