package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
)

// The flowcontrol component puts the nodes' step records, and only them,
// into a priority level of their own: kube-apiserver says which level and
// schema classified a request in the X-Kubernetes-PF-* response headers.
func TestBootReportFlowControlComponent(t *testing.T) {
	level, schema := applyFlowControlComponent(t)

	ns := syncerNamespace(t)
	osp := "e2e-flowcontrol-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	token := reportingMD(t, ns, osp, "pool", "pool-1-0001")
	body, err := json.Marshal(step("packages", osmv1alpha1.StepPhaseStarted, 0, ""))
	if err != nil {
		t.Fatal(err)
	}
	base := env.config.Host + "/apis/osm.k8c.io/v1alpha1/namespaces/" + ns
	// kube-apiserver's APF controller takes the new objects within seconds.
	eventually(t, time.Minute, func() error {
		status, header, err := pfRequest(t, token, http.MethodPost, base+"/bootreports/pool-1-0001/step", body)
		if err != nil {
			return err
		}
		if got := header.Get("X-Kubernetes-PF-PriorityLevel-UID"); got != level {
			return fmt.Errorf("a step record went to priority level %s (flow schema %s), want osm-apiserver-boot-reports (%s)",
				got, header.Get("X-Kubernetes-PF-FlowSchema-UID"), level)
		}
		if status != http.StatusCreated && status != http.StatusOK {
			return fmt.Errorf("a step record: HTTP %d", status)
		}
		return nil
	})
	// The same ServiceAccount's other requests, and another identity's step
	// records, are not in it.
	for _, r := range []struct{ what, token, method, url string }{
		{"the MD's provisioning payload", token, http.MethodGet, base + "/provisioningpayloads/pool"},
		{"the MD's boot report", token, http.MethodGet, base + "/bootreports/pool-1-0001"},
		{"an administrator's step record", env.config.BearerToken, http.MethodPost, base + "/bootreports/pool-1-0001/step"},
	} {
		var payload []byte
		if r.method == http.MethodPost {
			payload = body
		}
		_, header, err := pfRequest(t, r.token, r.method, r.url, payload)
		if err != nil {
			t.Fatal(err)
		}
		if got := header.Get("X-Kubernetes-PF-FlowSchema-UID"); got == schema || got == "" {
			t.Errorf("%s: flow schema %q, want another than osm-apiserver-boot-reports (%s)", r.what, got, schema)
		}
	}
}

// applyFlowControlComponent applies what artifacts/deploy/components/flowcontrol
// adds to artifacts/deploy, until the test ends, and returns the UIDs of its
// PriorityLevelConfiguration and FlowSchema.
func applyFlowControlComponent(t *testing.T) (level, schema string) {
	t.Helper()
	dir := t.TempDir()
	// kustomize takes relative paths only.
	deploy, err := filepath.Rel(dir, filepath.Join(env.repo, "artifacts", "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	overlay := fmt.Sprintf("resources: [%s]\ncomponents: [%s/components/flowcontrol]\n", deploy, deploy)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(overlay), 0o600); err != nil {
		t.Fatal(err)
	}
	var flowControl []string
	for _, doc := range strings.Split(kubectl(t, "kustomize", dir), "\n---\n") {
		if strings.Contains(doc, "apiVersion: flowcontrol.apiserver.k8s.io/") {
			flowControl = append(flowControl, doc)
		}
	}
	if len(flowControl) != 2 {
		t.Fatalf("the component adds %d flowcontrol objects, want a FlowSchema and its PriorityLevelConfiguration", len(flowControl))
	}
	manifest := filepath.Join(dir, "flowcontrol.yaml")
	if err := os.WriteFile(manifest, []byte(strings.Join(flowControl, "\n---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "apply", "-f", manifest)
	t.Cleanup(func() {
		if _, err := kubectlCtx(context.Background(), "delete", "-f", manifest); err != nil {
			t.Error(err)
		}
	})
	level = kubectl(t, "get", "prioritylevelconfiguration", "osm-apiserver-boot-reports", "-o", "jsonpath={.metadata.uid}")
	schema = kubectl(t, "get", "flowschema", "osm-apiserver-boot-reports", "-o", "jsonpath={.metadata.uid}")

	return level, schema
}

// pfRequest sends a request through kube-apiserver with token (the test
// cluster's client certificate when empty) and returns its answer's status
// and headers.
func pfRequest(t *testing.T, token, method, url string, body []byte) (int, http.Header, error) {
	t.Helper()
	cfg := rest.CopyConfig(env.config)
	if token != "" {
		cfg = &rest.Config{Host: env.config.Host, BearerToken: token,
			TLSClientConfig: rest.TLSClientConfig{CAData: env.config.CAData, CAFile: env.config.CAFile}}
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: transport, Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, resp.Header, nil
}
