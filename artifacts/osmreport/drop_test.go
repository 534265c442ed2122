package osmreport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
)

// Reporting never fails or holds up a boot: refused, throttled, failing,
// hanging, untrusted or missing servers cost a few seconds at most, and the
// command's own exit code is what run exits with. (What a hanging server
// did not take stays in the spool: spool_test.go.)
func TestReportsThatCannotBeSentAreDropped(t *testing.T) {
	t.Run("retried", func(t *testing.T) {
		s := newServer(t, http.StatusServiceUnavailable, http.StatusTooManyRequests)
		n := newNode(t, s)
		n.osmReport(t, nil, "start", "packages")
		if records, requests := s.got(); len(records) != 1 || requests != 3 {
			t.Errorf("%d records after %d requests, want 1 after 3 (503 and 429 retried)", len(records), requests)
		}
	})
	t.Run("refused", func(t *testing.T) {
		s := newServer(t, http.StatusForbidden)
		n := newNode(t, s)
		code, out := n.osmReport(t, nil, "run", "packages", "--", "true")
		if _, requests := s.got(); code != 0 || requests != 2 || !strings.Contains(out, "403") {
			t.Errorf("exit %d after %d requests (%s), want 0 after 2: a 403 is not retried", code, requests, out)
		}
	})
	t.Run("hanging", func(t *testing.T) {
		s := newServer(t)
		s.hang = true
		n := newNode(t, s)
		code, out := n.osmReport(t, []string{"OSM_REPORT_DEADLINE=3"}, "run", "packages", "--", "sh", "-c", "exit 3")
		if code != 3 || !strings.Contains(out, "kept to send later") {
			t.Errorf("exit %d (%s), want the command's 3 and the records kept", code, out)
		}
		// Then each record gets one short try.
		_, before := s.got()
		n.osmReport(t, nil, "start", "next")
		if _, after := s.got(); after-before != 1 {
			t.Errorf("%d tries while the server is known unreachable, want 1", after-before)
		}
	})
	t.Run("untrusted", func(t *testing.T) {
		s := newServer(t)
		n := newNode(t, s)
		// A CA that did not sign the server's certificate: nothing is sent.
		ca := filepath.Join(n.dir, "other-ca.crt")
		if err := os.WriteFile(ca, selfSignedCA(t), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _ := n.osmReport(t, []string{"OSM_REPORT_CA=" + ca}, "run", "packages", "--", "true")
		if _, requests := s.got(); code != 0 || requests != 0 {
			t.Errorf("exit %d, %d requests reached a server the CA does not verify", code, requests)
		}
	})
	t.Run("unconfigured", func(t *testing.T) {
		s := newServer(t)
		n := newNode(t, s)
		code, out := n.osmReport(t, []string{"OSM_REPORT_CONFIG=/nonexistent"}, "run", "packages", "--", "echo", "ran")
		if _, requests := s.got(); code != 0 || requests != 0 || strings.TrimSpace(out) != "ran" {
			t.Errorf("exit %d, %d requests, output %q", code, requests, out)
		}
	})
}

// selfSignedCA returns the PEM of a CA certificate of its own.
func selfSignedCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestShellcheck(t *testing.T) {
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Fatal("missing shellcheck; run hack/install-test-deps.sh")
	}
	if out, err := exec.Command("shellcheck", "-s", "bash", "osm-report").CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
	// The embedded copy is the file.
	data, err := os.ReadFile("osm-report")
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != Script || !strings.HasPrefix(Script, "#!/usr/bin/env bash\n") {
		t.Error("Script is not osm-report")
	}
	commands := sets.New[string]()
	for _, line := range strings.Split(Script, "\n") {
		if strings.HasPrefix(line, "#   osm-report ") {
			commands.Insert(strings.Fields(line)[2])
		}
	}
	if !commands.Equal(sets.New("run", "start", "ok", "fail", "flush")) {
		t.Errorf("the header documents %v", sets.List(commands))
	}
}
