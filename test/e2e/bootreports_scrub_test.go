package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
)

// A failed step whose log tail holds credentials (the six of issue 27 and
// the MD's real fetch token in plain, base64 and wrapped base64 forms) is
// stored without any of them: not in the report as the API serves it, not
// in its Secret, not in any Event of the namespace.
func TestBootReportLogTailKeepsNoCredentials(t *testing.T) {
	ns := syncerNamespace(t)
	osp := "e2e-scrub-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	fetch := reportingMD(t, ns, osp, "gamma", "gamma-1-a")
	node := nodeClient(t, fetch)

	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	wrap := func(s string, width int) string {
		var lines []string
		for len(s) > width {
			lines, s = append(lines, s[:width]), s[width:]
		}
		return strings.Join(append(lines, s), "\n")
	}
	// The fetch token inside a base64 kubeconfig, at an offset, wrapped.
	kubeconfig := b64("apiVersion: v1\nusers:\n- user:\n    tok: " + fetch + "\n")
	credentials := map[string]string{
		"aws secret":      "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"docker auth":     "cm9ib3QkY2k6U3VwM3JTM2NyM3RQYXNzIQ",
		"client-key-data": "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVBdTFTVTFMZlZMUEhD",
		"curl -u":         "Tr0ub4dor-and-3",
		"--password":      "correct horse battery staple",
		"wrapped bearer":  b64("Authorization: Bearer " + fetch)[40:100],
		"fetch token":     fetch,
		"fetch, base64":   b64(fetch)[8:72],
		"fetch, wrapped":  kubeconfig[60:120],
	}
	// Two failed attempts of the step (a node retries it): the report keeps
	// both tails, the first as the step's last failure.
	tails := []string{strings.Join([]string{
		"+ export AWS_SECRET_ACCESS_KEY=" + credentials["aws secret"],
		`      "auth": "` + credentials["docker auth"] + `=="`,
		"    client-key-data: " + credentials["client-key-data"] + "LS0tLS1FTkQ=",
		"+ curl -fsSL -u deploy:" + credentials["curl -u"] + " https://artifacts.example.com/kubelet",
		"+ docker login registry.example.com --username robot --password '" + credentials["--password"] + "'",
		wrap(b64("Authorization: Bearer "+fetch), 76),
		"E: Unable to locate package containerd",
	}, "\n"), strings.Join([]string{
		"fetching with " + fetch,
		"token in a file: " + b64(fetch),
		wrap(kubeconfig, 64),
		"E: Unable to locate package containerd",
	}, "\n")}
	for i, tail := range tails {
		if len(tail) > bootreports.MaxLogTailBytes {
			t.Fatalf("tail %d is %d bytes, more than a node sends", i, len(tail))
		}
		if i > 0 {
			if err := report(t, node, ns, "gamma-1-a", step("packages", osmv1alpha1.StepPhaseStarted, 0, "")); err != nil {
				t.Fatal(err)
			}
		}
		if err := report(t, node, ns, "gamma-1-a", step("packages", osmv1alpha1.StepPhaseFailed, 100, tail)); err != nil {
			t.Fatal(err)
		}
	}

	check := func(what, text string) {
		t.Helper()
		for name, c := range credentials {
			if strings.Contains(text, c) {
				t.Errorf("%s holds the %s credential %q", what, name, c)
			}
		}
	}
	r := bootReport(t, ns, "gamma-1-a", inState(osmv1alpha1.BootStateFailed))
	for _, s := range r.Status.Steps {
		tails := []string{s.LogTail}
		if s.LastFailure != nil {
			tails = append(tails, s.LastFailure.LogTail)
		}
		for _, tail := range tails {
			check("the report's step "+s.Name, tail)
			if s.Name == "packages" && !strings.Contains(tail, "E: Unable to locate package containerd") {
				t.Errorf("the error line is gone: %q", tail)
			}
		}
		if s.Name == "packages" && s.LastFailure == nil {
			t.Errorf("the first failure is not kept: %+v", s)
		}
	}
	check("the report's message", r.Status.Message)
	secret, err := env.kube.CoreV1().Secrets(bootreports.Namespace).Get(context.Background(), bootreports.SecretName(ns, "gamma-1-a"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range secret.Data {
		check("the Secret's "+k, string(v))
	}
	for k, v := range secret.Annotations {
		check("the Secret's annotation "+k, v)
	}
	// The Event comes a moment later; wait for it, then read all.
	eventually(t, 30*time.Second, func() error {
		events, err := env.kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		found := false
		for _, e := range events.Items {
			found = found || e.Reason == "NodeProvisioningFailed"
		}
		if !found {
			return fmt.Errorf("no NodeProvisioningFailed Event yet: %d Events", len(events.Items))
		}
		return nil
	})
	events, err := env.kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		check("Event "+e.Name, e.Message+" "+e.Reason+" "+e.Action)
	}
}
