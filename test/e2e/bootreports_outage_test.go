package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
)

// reportingNode is a node's osm-report set up for machine of ns, as the
// default bootstrap sets it up, posting through kube-apiserver.
type reportingNode struct {
	dir string
	env []string
}

func newReportingNode(t *testing.T, ns, machine, token string) *reportingNode {
	t.Helper()
	dir := t.TempDir()
	ca := env.config.CAFile
	if len(env.config.CAData) > 0 {
		ca = filepath.Join(dir, "ca.crt")
		if err := os.WriteFile(ca, env.config.CAData, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tokenFile := filepath.Join(dir, "report-auth")
	if err := os.WriteFile(tokenFile, []byte("Authorization: Bearer "+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return &reportingNode{dir: dir, env: []string{
		"PATH=" + os.Getenv("PATH"),
		"OSM_REPORT_CONFIG=/nonexistent",
		"OSM_REPORT_SERVER=" + env.config.Host, "OSM_REPORT_CA=" + ca, "OSM_REPORT_TOKEN_FILE=" + tokenFile,
		"OSM_REPORT_NAMESPACE=" + ns, "OSM_REPORT_MACHINE=" + machine,
		"OSM_REPORT_PROFILE=e2e", "OSM_REPORT_PROFILE_VERSION=v1.0.0", "OSM_REPORT_REVISION=1",
		"OSM_REPORT_RUN_DIR=" + filepath.Join(dir, "run"), "OSM_REPORT_STATE_DIR=" + filepath.Join(dir, "state"),
		// No systemd here: the flusher is a process of its own session. It
		// ends when the spool is empty, or gone with the test's directory.
		"OSM_REPORT_DETACH=setsid", "OSM_REPORT_KEEP=600",
	}}
}

// run runs osm-report with args; like every osm-report command but a
// failing `run`, it must exit 0, and within a minute.
func (n *reportingNode) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(env.repo, "artifacts", "osmreport", "osm-report")}, args...)...)
	cmd.Env = n.env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("osm-report %v did not end: %s", args, out)
	}
	if _, ok := errors.AsType[*exec.ExitError](err); ok || err != nil {
		t.Fatalf("osm-report %v: %v: %s", args, err, out)
	}
	return string(out)
}

// stepsAre checks a report's steps: names in order, each Succeeded once.
func stepsAre(names ...string) func(*osmv1alpha1.BootReport) error {
	return func(r *osmv1alpha1.BootReport) error {
		var got []string
		for _, s := range r.Status.Steps {
			got = append(got, fmt.Sprintf("%s:%s:%d", s.Name, s.Phase, s.Attempts))
		}
		var want []string
		for _, n := range names {
			want = append(want, n+":Succeeded:1")
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			return fmt.Errorf("%s: steps %v, want %v", r.Name, got, want)
		}
		return nil
	}
}

// Records a node sends while osm-apiserver is stopped for a minute arrive,
// in order, once it is back, the final one too: osm-report keeps them and
// its flusher sends them with no further command from the boot.
func TestBootReportsSentDuringAnOutageArriveInOrder(t *testing.T) {
	ns := syncerNamespace(t)
	osp := "e2e-reports-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	const machine = "outage-1-a"
	token := reportingMD(t, ns, osp, "outage", machine)
	node := newReportingNode(t, ns, machine, token)
	// osm-report drops a 403: first the server knows the machine (a record
	// of a dry run is authorized, not written).
	probe := step("probe", osmv1alpha1.StepPhaseStarted, 0, "")
	if _, err := waitKnown(t, nodeClient(t, token), ns, machine, probe); err != nil {
		t.Fatal(err)
	}
	node.run(t, "run", "payload-fetched", "--", "true")
	bootReport(t, ns, machine, stepsAre("payload-fetched"))

	stopped := time.Now()
	resume := pauseHarnessServer(t)
	steps := []string{"packages", "container-runtime", "kubelet-configured"}
	for _, s := range steps {
		node.run(t, "run", s, "--", "true")
	}
	node.run(t, "run", "--final", "kubelet-started", "--", "true")
	if spooled := node.spooled(t); !slices.Contains(spooled, "Succeeded kubelet-started") {
		t.Errorf("the final record is not kept while osm-apiserver is stopped: the spool holds %q", spooled)
	}
	time.Sleep(time.Until(stopped.Add(time.Minute)))
	resume()
	t.Logf("osm-apiserver stopped for %s", time.Since(stopped).Round(time.Second))

	want := append(append([]string{"payload-fetched"}, steps...), "kubelet-started")
	var r *osmv1alpha1.BootReport
	eventually(t, 4*time.Minute, func() error {
		var err error
		if r, err = env.osm.OsmV1alpha1().BootReports(ns).Get(context.Background(), machine, metav1.GetOptions{}); err != nil {
			return err
		}
		return stepsAre(want...)(r)
	})
	if r.Status.State != osmv1alpha1.BootStateSucceeded || r.Status.Reason != "" || r.Status.Boots != 1 {
		t.Errorf("report after the outage: %s, reason %q, %d boots", r.Status.State, r.Status.Reason, r.Status.Boots)
	}
	// The steps arrived in the order they ran.
	for i := 1; i < len(r.Status.Steps); i++ {
		if r.Status.Steps[i].FinishTime.Before(r.Status.Steps[i-1].FinishTime) {
			t.Errorf("step %s finished before %s", r.Status.Steps[i].Name, r.Status.Steps[i-1].Name)
		}
	}
	eventually(t, time.Minute, func() error {
		if spooled := node.spooled(t); len(spooled) > 0 {
			return fmt.Errorf("spool holds %q", spooled)
		}
		return nil
	})
}

// spooled is "phase step" of each record osm-report keeps, in order.
func (n *reportingNode) spooled(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(n.dir, "state", "spool", "*.rec"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) { // sent meanwhile
			t.Fatal(err)
		}
		if _, what, ok := strings.Cut(strings.TrimSuffix(string(data), "\n"), "\n"); ok {
			out = append(out, what)
		}
	}
	return out
}

// A report still Provisioning is completed once its machine's Node
// registers, and says it was inferred; a machine without a Node keeps its
// report; the node's own final record wins over the inference.
func TestBootReportCompletedFromItsNode(t *testing.T) {
	ns := syncerNamespace(t)
	osp := "e2e-reports-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	joined, stuck := "joined-1-a", "joined-1-b"
	client := nodeClient(t, reportingMD(t, ns, osp, "joined", joined, stuck))
	for _, m := range []string{joined, stuck} {
		if err := report(t, client, ns, m, step("kubelet-started", osmv1alpha1.StepPhaseStarted, 0, "")); err != nil {
			t.Fatal(err)
		}
		bootReport(t, ns, m, inState(osmv1alpha1.BootStateProvisioning))
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: joined}}
	if _, err := env.kube.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.kube.CoreV1().Nodes().Delete(context.Background(), joined, metav1.DeleteOptions{}) })

	r := bootReport(t, ns, joined, func(r *osmv1alpha1.BootReport) error {
		if r.Status.State != osmv1alpha1.BootStateSucceeded || r.Status.Reason != osmv1alpha1.ReasonNodeRegistered {
			return fmt.Errorf("%s: %s, reason %q", r.Name, r.Status.State, r.Status.Reason)
		}
		return nil
	})
	if !strings.HasPrefix(r.Status.Message, "inferred: node registered") || !strings.Contains(r.Status.Message, "step kubelet-started running") {
		t.Errorf("message %q", r.Status.Message)
	}
	if out := kubectl(t, "get", "bootreports", "-n", ns, joined, "--no-headers"); !strings.Contains(out, "Succeeded") || !strings.Contains(out, "inferred: node registered") {
		t.Errorf("kubectl get bootreports does not say it was inferred: %s", out)
	}
	// The OSC counts it provisioned.
	eventually(t, time.Minute, func() error {
		osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).Get(context.Background(), "joined", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if m := osc.Status.Machines; m == nil || m.Current != 1 || m.Provisioning != 1 {
			return fmt.Errorf("OSC machines %+v", m)
		}
		return nil
	})
	if r := bootReport(t, ns, stuck, inState(osmv1alpha1.BootStateProvisioning)); r.Status.Reason != "" {
		t.Errorf("the report of a machine without a Node has reason %q", r.Status.Reason)
	}

	final := step("kubelet-started", osmv1alpha1.StepPhaseSucceeded, 0, "")
	final.Spec.Final = true
	if err := report(t, client, ns, joined, final); err != nil {
		t.Fatal(err)
	}
	r = bootReport(t, ns, joined, inState(osmv1alpha1.BootStateSucceeded))
	if r.Status.Reason != "" || !strings.HasPrefix(r.Status.Message, "provisioned in") {
		t.Errorf("after the node's final record: reason %q, message %q", r.Status.Reason, r.Status.Message)
	}
}

// waitKnown posts s as a dry run until the server knows machine.
func waitKnown(t *testing.T, client osmclient.Interface, ns, machine string, s *osmv1alpha1.BootStep) (*osmv1alpha1.BootStep, error) {
	t.Helper()
	var out *osmv1alpha1.BootStep
	var err error
	_ = poll(context.Background(), time.Minute, func() error {
		out, err = client.OsmV1alpha1().BootReports(ns).CreateStep(context.Background(), machine, s, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if apierrors.IsForbidden(err) && (strings.Contains(err.Error(), "is not known") || strings.Contains(err.Error(), "is none")) {
			return err
		}
		return nil
	})
	return out, err
}
