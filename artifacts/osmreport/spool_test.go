package osmreport

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func (s *server) setDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// sent is "phase step" of each record the server took, in order.
func (s *server) sent() []string {
	records, _ := s.got()
	out := make([]string, 0, len(records))
	for _, r := range records {
		out = append(out, string(r.Spec.Phase)+" "+r.Spec.Step)
	}
	return out
}

func (n *node) spooled(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(n.dir, "state", "spool", "*.rec"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, what, _ := strings.Cut(strings.TrimSuffix(string(data), "\n"), "\n")
		out = append(out, what)
	}
	return out
}

// short: a server that is down costs each command two seconds.
var short = []string{"OSM_REPORT_DEADLINE=2"}

// provision runs steps of a boot: each started and succeeded, the last with
// --final when final.
func provision(t *testing.T, n *node, env []string, final bool, steps ...string) []string {
	t.Helper()
	var want []string
	for i, step := range steps {
		args := []string{"run", step, "--", "true"}
		if final && i == len(steps)-1 {
			args = []string{"run", "--final", step, "--", "true"}
		}
		if code, out := n.osmReport(t, env, args...); code != 0 {
			t.Fatalf("osm-report %v: exit %d: %s", args, code, out)
		}
		want = append(want, "Started "+step, "Succeeded "+step)
	}
	return want
}

// Records the server could not take are kept on disk and sent, in order,
// by the next command once it is back.
func TestRecordsKeptWhileTheServerIsDownArriveInOrder(t *testing.T) {
	s := newServer(t)
	n := newNode(t, s)
	want := provision(t, n, short, false, "payload-fetched")
	s.setDown(true)
	want = append(want, provision(t, n, short, false, "packages", "container-runtime")...)
	if got := n.spooled(t); !slices.Equal(got, want[2:]) {
		t.Fatalf("spool %q, want %q", got, want[2:])
	}
	// Log tails are scrubbed by the server only: root alone reads the spool.
	spool := filepath.Join(n.dir, "state", "spool")
	files, _ := filepath.Glob(filepath.Join(spool, "*.rec"))
	for _, f := range append(files, spool) {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v: others may read it", f, fi.Mode())
		}
	}
	s.setDown(false)
	want = append(want, provision(t, n, nil, true, "kubelet-started")...)
	if got := s.sent(); !slices.Equal(got, want) {
		t.Errorf("sent %q, want %q", got, want)
	}
	if got := n.spooled(t); len(got) != 0 {
		t.Errorf("spool keeps %q after the server took it", got)
	}
	records, _ := s.got()
	if last := records[len(records)-1].Spec; !last.Final {
		t.Errorf("the final record lost its mark: %+v", last)
	}
}

// The final record kept while the server is down is sent by the flusher the
// command started apart, once the server is back: no later command comes.
func TestAFlusherSendsTheSpoolOnceTheServerIsBack(t *testing.T) {
	s := newServer(t)
	s.setDown(true)
	n := newNode(t, s)
	want := provision(t, n, append([]string{"OSM_REPORT_DETACH=setsid"}, short...), true, "kubelet-configured", "kubelet-started")
	if got := s.sent(); len(got) != 0 {
		t.Fatalf("sent %q while down", got)
	}
	s.setDown(false)
	deadline := time.Now().Add(2 * time.Minute)
	for !slices.Equal(s.sent(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("sent %q, want %q; spool %q", s.sent(), want, n.spooled(t))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// It ends with the spool empty.
	for len(n.spooled(t)) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("spool %q", n.spooled(t))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The spool is bounded: the oldest records go first, with a warning.
func TestTheSpoolIsBounded(t *testing.T) {
	s := newServer(t)
	s.setDown(true)
	n := newNode(t, s)
	env := append([]string{"OSM_REPORT_SPOOL_RECORDS=3"}, short...)
	want := provision(t, n, env, false, "packages", "container-runtime", "kubelet-started")
	if got := n.spooled(t); !slices.Equal(got, want[3:]) {
		t.Fatalf("spool %q, want the latest 3 of %q", got, want)
	}
	_, out := n.osmReport(t, append([]string{"OSM_REPORT_SPOOL_BYTES=1"}, short...), "start", "kubelet-started")
	if got := n.spooled(t); !slices.Equal(got, []string{"Started kubelet-started"}) || !strings.Contains(out, "the spool is full; dropped") {
		t.Errorf("over the byte bound: spool %q, output %s", got, out)
	}
}

// A record kept across a reboot (the run directory is empty again) is sent;
// one older than OSM_REPORT_KEEP, and one refused for good, are dropped.
func TestSpooledRecordsAfterARebootAndTheirEnd(t *testing.T) {
	s := newServer(t, http.StatusServiceUnavailable, http.StatusServiceUnavailable, http.StatusServiceUnavailable,
		http.StatusServiceUnavailable, http.StatusServiceUnavailable, http.StatusServiceUnavailable)
	s.setDown(true)
	n := newNode(t, s)
	n.osmReport(t, short, "start", "old")
	n.osmReport(t, short, "start", "refused")
	n.osmReport(t, short, "start", "kept")
	files, _ := filepath.Glob(filepath.Join(n.dir, "state", "spool", "*.rec"))
	if len(files) != 3 {
		t.Fatalf("spool %q", n.spooled(t))
	}
	hourAgo := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(files[0], hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(n.dir, "run")); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.down, s.statuses = false, []int{http.StatusForbidden}
	s.mu.Unlock()
	_, out := n.osmReport(t, nil, "flush")
	if got := s.sent(); !slices.Equal(got, []string{"Started kept"}) {
		t.Errorf("sent %q (%s), want the kept record only", got, out)
	}
	if !strings.Contains(out, "old: not sent within 3600s; dropped") || !strings.Contains(out, "refused: the server answered 403; dropped") {
		t.Errorf("output %s", out)
	}
	if got := n.spooled(t); len(got) != 0 {
		t.Errorf("spool %q", got)
	}
}
