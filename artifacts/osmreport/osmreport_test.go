package osmreport

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
)

// server is an API server stand-in over TLS that records the step records
// it is sent, answering each with the next of its statuses (then 201).
type server struct {
	*httptest.Server
	mu       sync.Mutex
	records  []v1alpha1.BootStep
	requests int
	statuses []int
	hang     bool
	down     bool // answers 503 to everything
}

const token = "fetch-token-value"

func newServer(t *testing.T, statuses ...int) *server {
	t.Helper()
	s := &server{statuses: statuses}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.CloseClientConnections() // ends the hanging requests
		s.Close()
	})
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	hang := s.hang
	if s.down {
		s.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	status := http.StatusCreated
	if len(s.statuses) > 0 {
		status, s.statuses = s.statuses[0], s.statuses[1:]
	}
	s.mu.Unlock()
	if hang {
		// Once the body is read, a closed connection ends the request.
		_, _ = io.ReadAll(r.Body)
		<-r.Context().Done()
		return
	}
	want := "/apis/osm.k8c.io/v1alpha1/namespaces/team/bootreports/pool-abc/step"
	if r.Method != http.MethodPost || r.URL.Path != want || r.Header.Get("Authorization") != "Bearer "+token ||
		r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, fmt.Sprintf("unexpected %s %s %v", r.Method, r.URL.Path, r.Header), http.StatusBadRequest)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var step v1alpha1.BootStep
	if err := json.Unmarshal(body, &step); err != nil {
		http.Error(w, fmt.Sprintf("invalid JSON %v: %s", err, body), http.StatusBadRequest)
		return
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	if status < 300 {
		s.mu.Lock()
		s.records = append(s.records, step)
		s.mu.Unlock()
	}
}

func (s *server) got() ([]v1alpha1.BootStep, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]v1alpha1.BootStep(nil), s.records...), s.requests
}

// node is the files a node's bootstrap writes for osm-report.
type node struct {
	dir string
	env []string
}

func newNode(t *testing.T, s *server) *node {
	t.Helper()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "report.env")
	settings := strings.Join([]string{
		"OSM_REPORT_SERVER=" + s.URL, "OSM_REPORT_CA=" + ca, "OSM_REPORT_TOKEN_FILE=" + tok,
		"OSM_REPORT_NAMESPACE=team", "OSM_REPORT_MACHINE=pool-abc",
		"OSM_REPORT_PROFILE=osp-ubuntu", "OSM_REPORT_PROFILE_VERSION=v1.2.0", "OSM_REPORT_REVISION=3",
	}, "\n")
	if err := os.WriteFile(config, []byte(settings+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &node{dir: dir, env: []string{
		"PATH=" + os.Getenv("PATH"),
		"OSM_REPORT_CONFIG=" + config,
		"OSM_REPORT_RUN_DIR=" + filepath.Join(dir, "run"),
		"OSM_REPORT_STATE_DIR=" + filepath.Join(dir, "state"),
		"OSM_REPORT_BOOT_SECRET_FILE=" + filepath.Join(dir, "boot-secret"), // none unless a test writes it
		"OSM_REPORT_DEADLINE=15",                                           // generous: a busy machine is slow to start bash and curl
		"OSM_REPORT_DETACH=none",                                           // no flusher apart: the tests that want one ask for it
	}}
}

// osmReport runs the script with bash; it must end within a minute (it
// must never hold a boot up).
func (n *node) osmReport(t *testing.T, env []string, args ...string) (code int, output string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{"osm-report"}, args...)...)
	cmd.Env = append(append([]string{}, n.env...), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("osm-report %v did not end: %s", args, out)
	}
	if e, ok := errors.AsType[*exec.ExitError](err); ok {
		return e.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

func TestRunReportsASucceededStep(t *testing.T) {
	s := newServer(t)
	n := newNode(t, s)
	code, out := n.osmReport(t, nil, "run", "--final", "kubelet-started", "--", "sh", "-c", "echo starting kubelet; echo warn >&2")
	if code != 0 || !strings.Contains(out, "starting kubelet") || !strings.Contains(out, "warn") {
		t.Fatalf("exit %d, output %q: want 0 and the command's output", code, out)
	}
	records, _ := s.got()
	if len(records) != 2 {
		t.Fatalf("%d records, want started and succeeded: %+v", len(records), records)
	}
	started, ended := records[0].Spec, records[1].Spec
	if started.Step != "kubelet-started" || started.Phase != v1alpha1.StepPhaseStarted || started.ExitCode != nil {
		t.Errorf("started %+v", started)
	}
	if ended.Phase != v1alpha1.StepPhaseSucceeded || ended.ExitCode == nil || *ended.ExitCode != 0 || ended.Duration == nil ||
		!ended.Final || ended.LogTail != "" {
		t.Errorf("ended %+v", ended)
	}
	if ended.Profile.Name != "osp-ubuntu" || ended.Profile.Version != "v1.2.0" || ended.MachineDeploymentRevision != "3" || ended.BootID == "" || ended.BootSecret != "" {
		t.Errorf("record lacks what the node was provisioned with: %+v", ended)
	}
	// Provisioned: a later boot reports nothing, and still runs its commands.
	code, out = n.osmReport(t, nil, "run", "packages", "--", "echo", "again")
	if records, _ := s.got(); code != 0 || len(records) != 2 || !strings.Contains(out, "again") {
		t.Errorf("after provisioning: exit %d, %d records, output %q", code, len(records), out)
	}
}

func TestRunReportsAFailedStepWithItsLogTail(t *testing.T) {
	s := newServer(t)
	n := newNode(t, s)
	script := `for i in $(seq 1 100); do echo "line $i of \"apt\" \\ output	tab"; done
printf 'caf\303\251 \001\n'
echo "E: Unable to locate package containerd" >&2
exit 100`
	code, _ := n.osmReport(t, nil, "run", "container-runtime", "--", "bash", "-c", script)
	if code != 100 {
		t.Fatalf("exit %d, want the command's 100", code)
	}
	records, _ := s.got()
	if len(records) != 2 {
		t.Fatalf("%d records", len(records))
	}
	failed := records[1].Spec
	if failed.Phase != v1alpha1.StepPhaseFailed || failed.ExitCode == nil || *failed.ExitCode != 100 || failed.Final {
		t.Errorf("failed %+v", failed)
	}
	lines := strings.Split(failed.LogTail, "\n")
	if len(lines) > 40 || len(failed.LogTail) > 4096 || lines[len(lines)-1] != "E: Unable to locate package containerd" {
		t.Errorf("log tail of %d lines, %d bytes, ending %q", len(lines), len(failed.LogTail), lines[len(lines)-1])
	}
	if !strings.Contains(failed.LogTail, `line 100 of "apt" \ output`+"\t"+`tab`) || !strings.Contains(failed.LogTail, "caf ") {
		t.Errorf("quotes, backslashes, tabs or text lost:\n%s", failed.LogTail)
	}
	// Not provisioned: the next boot reports.
	n.osmReport(t, nil, "start", "container-runtime")
	if records, _ := s.got(); len(records) != 3 {
		t.Errorf("after a failure the next record was not sent")
	}
}

func TestStartOkFail(t *testing.T) {
	s := newServer(t)
	n := newNode(t, s)
	log := filepath.Join(n.dir, "fetch.log")
	if err := os.WriteFile(log, []byte("curl: (22) The requested URL returned error: 404\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"start", "payload-fetched"},
		{"ok", "payload-fetched"},
		{"start", "kubelet-binaries"},
		{"fail", "kubelet-binaries", "--exit-code", "22", "--log", log},
		{"nonsense"},
		{"fail"},
	} {
		if code, out := n.osmReport(t, nil, args...); code != 0 {
			t.Errorf("osm-report %v: exit %d (%s); only run exits non-zero", args, code, out)
		}
	}
	records, _ := s.got()
	var got []string
	for _, r := range records {
		got = append(got, r.Spec.Step+" "+string(r.Spec.Phase))
	}
	want := []string{"payload-fetched Started", "payload-fetched Succeeded", "kubelet-binaries Started", "kubelet-binaries Failed"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("records %v, want %v", got, want)
	}
	if f := records[3].Spec; *f.ExitCode != 22 || !strings.Contains(f.LogTail, "404") || records[1].Spec.Duration == nil {
		t.Errorf("fail record %+v, ok record %+v", f, records[1].Spec)
	}
}

// TestOkWithDurationAndHeaderTokenFile: a step measured elsewhere (the
// bootstrap's MachineJoin, before osm-report was on the node) is reported
// with its duration, and the token file may hold the "Authorization: Bearer"
// line the bootstrap gives curl with -H @FILE.
func TestOkWithDurationAndHeaderTokenFile(t *testing.T) {
	s := newServer(t)
	n := newNode(t, s)
	header := filepath.Join(n.dir, "auth")
	if err := os.WriteFile(header, []byte("Authorization: Bearer "+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"OSM_REPORT_TOKEN_FILE=" + header}
	if code, out := n.osmReport(t, env, "ok", "payload-fetched", "--duration", "12.5"); code != 0 {
		t.Fatalf("osm-report ok --duration: exit %d (%s)", code, out)
	}
	if code, out := n.osmReport(t, env, "ok", "packages", "--duration", "soon"); code != 0 {
		t.Fatalf("osm-report ok --duration soon: exit %d (%s)", code, out)
	}
	records, _ := s.got()
	if len(records) != 2 {
		t.Fatalf("records %+v, want two", records)
	}
	if d := records[0].Spec.Duration; records[0].Spec.Phase != v1alpha1.StepPhaseSucceeded || d == nil || d.Duration != 12500*time.Millisecond {
		t.Errorf("record %+v, want payload-fetched Succeeded after 12.5s", records[0].Spec)
	}
	if d := records[1].Spec.Duration; d != nil {
		t.Errorf("record %+v: an invalid --duration must send none (the step was not started)", records[1].Spec)
	}
}

// TestRecordsCarryTheBootSecret: with the secret the bootstrap made for its
// MachineJoin, every record carries it, so that osm-apiserver takes the
// answered boot's records only.
func TestRecordsCarryTheBootSecret(t *testing.T) {
	s := newServer(t)
	n := newNode(t, s)
	if err := os.WriteFile(filepath.Join(n.dir, "boot-secret"), []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := n.osmReport(t, nil, "run", "packages", "--", "true"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	records, _ := s.got()
	if len(records) != 2 {
		t.Fatalf("%d records, want 2", len(records))
	}
	for _, r := range records {
		if r.Spec.BootSecret != "0123456789abcdef0123456789abcdef" {
			t.Errorf("%s %s: boot secret %q", r.Spec.Phase, r.Spec.Step, r.Spec.BootSecret)
		}
	}
}
