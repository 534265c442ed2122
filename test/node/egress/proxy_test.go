package egress

import (
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The proxy tunnels a routed CONNECT both ways and refuses the others.
func TestProxy(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = echo.Close() }()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
		}
	}()
	var mu sync.Mutex
	var refused []string
	p := &Proxy{
		Route: func(target string) (string, string) {
			if target == "10.0.2.16:10250" {
				return echo.Addr().String(), ""
			}
			return "", "unknown"
		},
		Refused: func(target, why string) {
			mu.Lock()
			refused = append(refused, target+": "+why)
			mu.Unlock()
		},
	}
	socket := filepath.Join(t.TempDir(), "egress.sock")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	go func() { _ = p.Serve(l) }()

	c, err := Dial("unix", socket, "10.0.2.16:10250")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "hello"); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.UnixConn).CloseWrite()
	got, err := io.ReadAll(c)
	_ = c.Close()
	if err != nil || string(got) != "hello" {
		t.Errorf("through the tunnel: %q, %v; want the echo of hello", got, err)
	}

	if _, err := Dial("unix", socket, "10.0.2.15:10250"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("CONNECT to an unrouted address: %v, want 403", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(refused) != 1 || refused[0] != "10.0.2.15:10250: unknown" {
		t.Errorf("refusals reported: %q", refused)
	}
}
