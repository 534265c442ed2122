package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// A node reports with its MD's fetch credential through kube-apiserver:
// kubectl shows the report, its steps and the failing step's scrubbed log
// tail; the MD gets a Warning Event and its OSC counts the failure. Another
// MD's credential is refused (403), no or a bad credential with 401 (kube-apiserver),
// and oversized records (413).
func TestBootReportWithTheMDsCredential(t *testing.T) {
	ns := syncerNamespace(t)
	osp := "e2e-reports-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	alpha := reportingMD(t, ns, osp, "alpha", "alpha-1-a")
	beta := reportingMD(t, ns, osp, "beta", "beta-1-a")
	node := nodeClient(t, alpha)

	if err := report(t, node, ns, "alpha-1-a", step("payload-fetched", osmv1alpha1.StepPhaseSucceeded, 0, "")); err != nil {
		t.Fatalf("report with the MD's own credential: %v", err)
	}
	if err := report(t, node, ns, "alpha-1-a", step("packages", osmv1alpha1.StepPhaseStarted, 0, "")); err != nil {
		t.Fatal(err)
	}
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAsecretsecret\n-----END RSA PRIVATE KEY-----"
	tail := "Reading package lists...\nE: Unable to locate package containerd\n" +
		"curl -H 'Authorization: Bearer " + alpha + "'\nkubeadm join --token abcdef.0123456789abcdef\n" + pem
	if err := report(t, node, ns, "alpha-1-a", step("packages", osmv1alpha1.StepPhaseFailed, 100, tail)); err != nil {
		t.Fatal(err)
	}

	// kubectl get: MD, machine, step, state, elapsed, age, message.
	out := kubectl(t, "get", "bootreports", "-n", ns)
	header, row := strings.Fields(strings.Split(out, "\n")[0]), rowOf(strings.Split(out, "\n"), "alpha-1-a")
	for _, want := range []string{"NAME", "MACHINE", "STEP", "STATE", "REVISION", "ELAPSED", "AGE", "MESSAGE"} {
		if !strings.Contains(strings.Join(header, " "), want) {
			t.Errorf("kubectl get bootreports: no column %s in %v", want, header)
		}
	}
	for _, want := range []string{"alpha", "packages", "Failed 1 ", "step packages failed with exit code 100: E: Unable to locate package containerd"} {
		if !strings.Contains(strings.Join(strings.Fields(row), " "), want) {
			t.Errorf("row %q lacks %q", row, want)
		}
	}
	if row := rowOf(strings.Split(kubectl(t, "get", "bootreports", "-n", ns, "-o", "wide"), "\n"), "alpha-1-a"); !strings.Contains(row, "e2e v1.0.0") {
		t.Errorf("kubectl get bootreports -o wide: %q lacks the profile", row)
	}
	// -o yaml: every step, the failing one's log tail, scrubbed.
	yaml := kubectl(t, "get", "bootreport", "-n", ns, "alpha-1-a", "-o", "yaml")
	for _, want := range []string{"name: payload-fetched", "name: packages", "exitCode: 100", "Unable to locate package containerd", "[redacted]", "duration: 1.5s", "bootID: b1",
		"machineDeploymentRevision: \"1\"", "name: e2e", "version: v1.0.0"} {
		if !strings.Contains(yaml, want) {
			t.Errorf("-o yaml lacks %q:\n%s", want, yaml)
		}
	}
	for _, secret := range []string{alpha, "0123456789abcdef", "MIIEowIBAAKCAQEA"} {
		if strings.Contains(yaml, secret) {
			t.Errorf("the stored log tail holds %.20q...", secret)
		}
	}

	// A Warning Event on the MD names machine, step, exit code and error line.
	eventually(t, 30*time.Second, func() error {
		events, err := env.kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.name": "alpha", "reason": "NodeProvisioningFailed"}.String()})
		if err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Type == "Warning" && e.Message == "machine alpha-1-a: step packages failed with exit code 100: E: Unable to locate package containerd" {
				return nil
			}
		}
		return fmt.Errorf("no NodeProvisioningFailed Event on alpha: %+v", events.Items)
	})
	// The OSC counts it.
	eventually(t, 30*time.Second, func() error {
		osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).Get(context.Background(), "alpha", metav1.GetOptions{})
		if err == nil && (osc.Status.Machines == nil || osc.Status.Machines.Failed != 1) {
			err = fmt.Errorf("machines %+v, want 1 failed", osc.Status.Machines)
		}
		return err
	})
	if row := rowOf(strings.Split(kubectl(t, "get", "osc", "-n", ns), "\n"), "alpha"); !strings.Contains(row, "1 failed") {
		t.Errorf("kubectl get osc: %q lacks the machines' summary", row)
	}

	// Another MD's credential: 403, and nothing written.
	err := report(t, nodeClient(t, beta), ns, "alpha-1-a", step("packages", osmv1alpha1.StepPhaseSucceeded, 0, ""))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "belongs to machinedeployment "+ns+"/alpha") {
		t.Errorf("another MD's credential: %v, want 403", err)
	}
	// No credential, or one kube-apiserver does not take: refused there.
	_, err = nodeClient(t, "").OsmV1alpha1().BootReports(ns).CreateStep(context.Background(), "alpha-1-a", step("x", osmv1alpha1.StepPhaseStarted, 0, ""), metav1.CreateOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Errorf("no credential: %v, want 401", err)
	}
	_, err = nodeClient(t, "not-a-token").OsmV1alpha1().BootReports(ns).CreateStep(context.Background(), "alpha-1-a", step("x", osmv1alpha1.StepPhaseStarted, 0, ""), metav1.CreateOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Errorf("a bad credential: %v, want 401", err)
	}
	// Oversized: a record over 8 KiB, and a body over 64 KiB.
	for _, size := range []int{9 << 10, 1 << 20} {
		err := report(t, node, ns, "alpha-1-a", step("packages", osmv1alpha1.StepPhaseFailed, 1, strings.Repeat("x", size)))
		if !apierrors.IsRequestEntityTooLargeError(err) {
			t.Errorf("a record with a log tail of %d bytes: %v, want 413", size, err)
		}
	}
	if r := bootReport(t, ns, "alpha-1-a", inState(osmv1alpha1.BootStateFailed)); len(r.Status.Steps) != 2 || r.Spec.MachineDeployment != "alpha" {
		t.Errorf("refused records changed the report: %+v", r.Status)
	}

	// osm-setup retries the script: Provisioning again, the failure kept.
	if err := report(t, node, ns, "alpha-1-a", step("packages", osmv1alpha1.StepPhaseStarted, 0, "")); err != nil {
		t.Fatal(err)
	}
	r := bootReport(t, ns, "alpha-1-a", inState(osmv1alpha1.BootStateProvisioning))
	if s := r.Status.Steps[1]; r.Status.Step != "packages" || s.Attempts != 2 || s.LastFailure == nil || s.LastFailure.ExitCode == nil || *s.LastFailure.ExitCode != 100 ||
		!strings.Contains(s.LastFailure.LogTail, "Unable to locate package containerd") || !strings.Contains(r.Status.Message, "again after step packages failed") {
		t.Errorf("after the retry started: %q, step %+v", r.Status.Message, s)
	}

	// A machine provisioned with the MD's revision counts as current; once
	// the MD is at its next revision, as older: the report keeps the
	// revision the node was provisioned with.
	final := step("kubelet-started", osmv1alpha1.StepPhaseSucceeded, 0, "")
	final.Spec.Final = true
	if err := report(t, nodeClient(t, beta), ns, "beta-1-a", final); err != nil {
		t.Fatal(err)
	}
	machinesOf := func(md string, want osmv1alpha1.MachineSummary) {
		t.Helper()
		eventually(t, 30*time.Second, func() error {
			osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).Get(context.Background(), md, metav1.GetOptions{})
			if err == nil && (osc.Status.Machines == nil || *osc.Status.Machines != want) {
				err = fmt.Errorf("machines of %s %+v, want %+v", md, osc.Status.Machines, want)
			}
			return err
		})
	}
	machinesOf("beta", osmv1alpha1.MachineSummary{Current: 1})
	patchMD(t, ns, "beta", fmt.Sprintf(`{"metadata":{"annotations":{%q:"2"}}}`, machinecontroller.AnnotationMDRevision))
	machinesOf("beta", osmv1alpha1.MachineSummary{Older: 1})
	if r := bootReport(t, ns, "beta-1-a", inState(osmv1alpha1.BootStateSucceeded)); r.Spec.MachineDeploymentRevision != "1" {
		t.Errorf("the report of a machine provisioned with revision 1 says %q", r.Spec.MachineDeploymentRevision)
	}

	// kubectl explain, and the metrics.
	if out := kubectl(t, "explain", "bootreports.status.steps"); !strings.Contains(out, "logTail") || !strings.Contains(out, "exitCode") {
		t.Errorf("kubectl explain bootreports.status.steps:\n%s", out)
	}
	code, body := get(t, osmHTTPClient(t, true), "/metrics")
	for _, want := range []string{`osm_apiserver_boot_reports_received_total{result="accepted"}`, `osm_apiserver_boot_reports_received_total{result="forbidden"}`,
		`osm_apiserver_boot_reports_received_total{result="too_large"}`, `osm_apiserver_boot_reports_step_failures_total{step="packages"}`} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %s", code, want)
		}
	}
}

// Reports go with their Machine and with their MD.
func TestBootReportsGoWithTheirMachineAndMD(t *testing.T) {
	ns := syncerNamespace(t)
	osp := "e2e-reports-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	node := nodeClient(t, reportingMD(t, ns, osp, "gamma", "gamma-1-a", "gamma-1-b"))
	for _, m := range []string{"gamma-1-a", "gamma-1-b"} {
		if err := report(t, node, ns, m, step("packages", osmv1alpha1.StepPhaseStarted, 0, "")); err != nil {
			t.Fatal(err)
		}
		bootReport(t, ns, m, inState(osmv1alpha1.BootStateProvisioning))
	}
	gone := func(machine string) func() error {
		return func() error {
			_, err := env.osm.OsmV1alpha1().BootReports(ns).Get(context.Background(), machine, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("report of %s still there: %w", machine, err)
		}
	}
	start := time.Now()
	if err := env.dynamic.Resource(machineResource).Namespace(ns).Delete(context.Background(), "gamma-1-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, gone("gamma-1-a"))
	t.Logf("report gone %s after its Machine", time.Since(start).Round(time.Millisecond))
	if _, err := env.osm.OsmV1alpha1().BootReports(ns).Get(context.Background(), "gamma-1-b", metav1.GetOptions{}); err != nil {
		t.Fatalf("the other machine's report: %v", err)
	}
	start = time.Now()
	if err := env.dynamic.Resource(mdResource).Namespace(ns).Delete(context.Background(), "gamma", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, gone("gamma-1-b"))
	t.Logf("report gone %s after its MachineDeployment", time.Since(start).Round(time.Millisecond))
}
