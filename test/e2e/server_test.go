package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHealthAndMetrics reads osm-apiserver's own endpoints, which kube-apiserver does
// not proxy: health is open, /metrics needs an authorized user.
func TestHealthAndMetrics(t *testing.T) {
	admin := osmHTTPClient(t, true)
	anonymous := osmHTTPClient(t, false)
	for _, path := range []string{"/healthz", "/readyz", "/livez"} {
		if code, body := get(t, anonymous, path); code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
	if code, _ := get(t, anonymous, "/metrics"); code != http.StatusForbidden && code != http.StatusUnauthorized {
		t.Errorf("GET /metrics without credentials: %d, want 401 or 403", code)
	}
	code, body := get(t, admin, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	// The fixtures have rendered (one OSP is broken) and been listed by now.
	for _, name := range []string{
		"osm_apiserver_render_duration_seconds_count",
		"osm_apiserver_render_errors_total",
		"osm_apiserver_render_cache_hits_total",
		"osm_apiserver_render_cache_misses_total",
		"osm_apiserver_render_cache_entries",
		"osm_apiserver_render_waiting",
	} {
		if !strings.Contains(body, "\n"+name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
}

// osmHTTPClient talks to osm-apiserver directly, verifying its certificate with the
// APIService's CA; withAdmin adds the admin's client certificate.
func osmHTTPClient(t testing.TB, withAdmin bool) *http.Client {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(env.pki, "osm-ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cfg := &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	if withAdmin {
		cert, err := tls.LoadX509KeyPair(filepath.Join(env.pki, "admin.crt"), filepath.Join(env.pki, "admin.key"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

func get(t testing.TB, c *http.Client, path string) (int, string) {
	t.Helper()
	resp, err := c.Get("https://" + env.osmAddr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// A replica is ready only once it can verify kube-apiserver's front proxy
// (pkg/server's front-proxy-ca check): before, proxied requests would be
// system:anonymous.
func TestReadyzChecksTheFrontProxyCA(t *testing.T) {
	if _, body := get(t, osmHTTPClient(t, false), "/readyz?verbose"); !strings.Contains(body, "[+]front-proxy-ca ok") {
		t.Errorf("/readyz?verbose has no front-proxy-ca check:\n%s", body)
	}
}
