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

// servers are the plain-HTTP servers the VMs reach through guestfwd: a
// mirror of download sites over $KIT/mirror for each VM, each with a log of
// its own, so that what a VM downloaded is attributable to it; and a
// container registry. All listen on 127.0.0.1 only and log every request.
type servers struct {
	registryAddr string
	// broken serves the mirror without the containerd.io package, then with a
	// corrupted kubelet, then whole, for the boot with brokenMirror.
	broken      *brokenMirror
	dir         string
	registryLog string

	mu         sync.Mutex
	mirrorLogs map[string]string // boot name: its mirror's log
	closers    []func()
}

func startServers(dir string) (*servers, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &servers{dir: dir, registryLog: filepath.Join(dir, "registry.log"), mirrorLogs: map[string]string{}, broken: &brokenMirror{}}
	registryLog, err := os.Create(s.registryLog)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = registryLog.Close() })
	reg := registry.New(registry.Logger(log.New(registryLog, "", log.LstdFlags)))
	if s.registryAddr, err = s.serve(reg); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// mirrorFor starts the mirror of boot name's VM alone, over the kit's
// mirror directory (the broken one if broken; one boot only), and returns
// its address; its requests go to mirrorLog(name).
func (s *servers) mirrorFor(name, mirrorDir string, broken bool) (string, error) {
	path := filepath.Join(s.dir, "mirror-"+name+".log")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	h := http.FileServer(http.Dir(mirrorDir))
	if broken {
		s.broken.mirror = h // before it serves anything
		h = s.broken
	}
	addr, err := s.serve(logRequests(log.New(f, "", log.LstdFlags), h))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closers = append(s.closers, func() { _ = f.Close() })
	s.mirrorLogs[name] = path
	return addr, err
}

// mirrorLog is the log of boot name's mirror ("" before mirrorFor).
func (s *servers) mirrorLog(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mirrorLogs[name]
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
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closers = append(s.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx) // the test is over; open downloads may be cut
	})
	return l.Addr().String(), nil
}

func (s *servers) close() {
	s.mu.Lock()
	closers := s.closers
	s.closers = nil
	s.mu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		closers[i]()
	}
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
