package node

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// servers are the two plain-HTTP servers the VMs reach through guestfwd: the
// mirror of download sites over $KIT/mirror, and a container registry.
// Both listen on 127.0.0.1 only and log every request for the diagnostics.
type servers struct {
	mirrorAddr, registryAddr string
	// brokenMirrorAddr serves the mirror without the containerd.io package,
	// then with a corrupted kubelet, then whole, for the boot with brokenMirror.
	brokenMirrorAddr       string
	broken                 *brokenMirror
	mirrorLog, registryLog string
	closers                []func()
}

func startServers(k *kit, dir string) (*servers, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &servers{mirrorLog: filepath.Join(dir, "mirror.log"), registryLog: filepath.Join(dir, "registry.log")}
	mirrorLog, err := os.Create(s.mirrorLog)
	if err != nil {
		return nil, err
	}
	registryLog, err := os.Create(s.registryLog)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = mirrorLog.Close(); _ = registryLog.Close() })
	mirror := logRequests(log.New(mirrorLog, "", log.LstdFlags), http.FileServer(http.Dir(filepath.Join(k.dir, "mirror"))))
	if s.mirrorAddr, err = s.serve(mirror); err != nil {
		s.close()
		return nil, err
	}
	s.broken = newBrokenMirror(mirror)
	broken := logRequests(log.New(mirrorLog, "broken mirror: ", log.LstdFlags), s.broken)
	if s.brokenMirrorAddr, err = s.serve(broken); err != nil {
		s.close()
		return nil, err
	}
	reg := registry.New(registry.Logger(log.New(registryLog, "", log.LstdFlags)))
	if s.registryAddr, err = s.serve(reg); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// serve serves h on a free 127.0.0.1 port and returns the address.
func (s *servers) serve(h http.Handler) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "node-test: server on %s: %v\n", l.Addr(), err)
		}
	}()
	s.closers = append(s.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx) // the test is over; open downloads may be cut
	})
	return l.Addr().String(), nil
}

func (s *servers) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

func (s *servers) port(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	var n int
	_, _ = fmt.Sscan(p, &n)
	return n
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func logRequests(l *log.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, req)
		l.Printf("%s %s %d", req.Method, req.URL.Path, rec.status)
	})
}

// servedAt is when a server first served something.
type servedAt struct {
	mu sync.Mutex
	at time.Time
}

func (s *servedAt) mark() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at.IsZero() {
		s.at = time.Now()
	}
}

func (s *servedAt) get() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.at
}

// brokenMirror serves mirror as two broken mirrors in turn, then as the
// mirror. First one that lost the containerd.io package: its apt
// repository's index still names it, the pool file is 404, so `apt-get
// install containerd.io` fails. Once the test has seen that failure it serves
// the package again, and the kubelet binaries as a mirror that corrupted them
// would: other bytes than their checksum files name. (The kubelet is
// corrupted from the start: the first phase never gets that far.) Once the
// test has seen that failure too, the mirror is whole again and the node joins.
type brokenMirror struct {
	mirror http.Handler
	// phase counts the fixes: 0 broken package, 1 corrupted kubelet, 2 whole.
	phase atomic.Int32
	// debRefused is the first 404 of the package, kubeletServed the first
	// corrupted kubelet.
	debRefused, kubeletServed servedAt
}

func newBrokenMirror(mirror http.Handler) *brokenMirror {
	return &brokenMirror{mirror: mirror}
}

// fix ends the current phase: the package is there again, then the kubelet.
func (m *brokenMirror) fix() { m.phase.Add(1) }

func (m *brokenMirror) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case m.phase.Load() == 0 && strings.HasPrefix(p, "/docker/linux/ubuntu/pool/") && strings.Contains(p, "/containerd.io_") && strings.HasSuffix(p, ".deb"):
		m.debRefused.mark()
		http.NotFound(w, r)
	case m.phase.Load() < 2 && strings.HasSuffix(p, "/bin/linux/amd64/kubelet"):
		m.kubeletServed.mark()
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write([]byte("this is not the kubelet: the mirror corrupted it\n"))
	default:
		m.mirror.ServeHTTP(w, r)
	}
}
