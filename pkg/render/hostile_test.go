package render

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// hostileAnnotation holds, on every OSP of testdata/hostile, text the error of
// its render contains.
const hostileAnnotation = "test.osm.k8c.io/expect-error"

// Bounds of the hostile tests: generous, they catch a render that does not
// stop (the unbudgeted renders hung, or allocated gigabytes), never its speed.
const (
	liveness   = 2 * time.Minute
	allocBound = 1 << 30 // bytes one hostile render may allocate in all
)

// hostileRenderTime is the time budget for a hostile OSP whose error is
// want: a loaded machine, or the race detector, must not turn the limit a
// case is about into a timeout; the cases about time keep a short one.
func hostileRenderTime(want string) time.Duration {
	switch {
	case strings.Contains(want, "took longer than"):
		return time.Second // the cases about time take minutes without a budget
	case raceDetector:
		return 100 * time.Second
	}
	return 10 * time.Second
}

// renderWithin renders in on r and fails the test if that does not return
// within liveness: without a budget some of these renders never end.
func renderWithin(t *testing.T, r *Renderer, in Input) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := r.Render(in)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(liveness):
		t.Fatalf("render of %s did not return within %s", in.OSP.Name, liveness)
		return nil
	}
}

func hostileInput(t *testing.T, path string) Input {
	t.Helper()
	in := goldenInput(t)
	osp, err := DecodeOSP(mustRead(t, path))
	if err != nil {
		t.Fatal(err)
	}
	in.OSP = osp
	in.MachineDeployment.Annotations[machinecontroller.AnnotationOSP] = osp.Name
	return in
}

// TestHostileOSPs renders every OSP of testdata/hostile: each fails, soon, with
// an error that names the OSP, the file and the template line, and within a
// bound of memory; the renderer still renders a good OSP afterwards.
func TestHostileOSPs(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "hostile", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no hostile OSPs in testdata/hostile: %v", err)
	}
	r := NewRenderer()
	goroutines := runtime.NumGoroutine()
	defer func(d time.Duration) { renderTime = d }(renderTime)
	for _, path := range paths {
		in := hostileInput(t, path)
		t.Run(in.OSP.Name, func(t *testing.T) {
			want := in.OSP.Annotations[hostileAnnotation]
			if want == "" {
				t.Fatalf("%s has no %s annotation", path, hostileAnnotation)
			}
			renderTime = hostileRenderTime(want)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := renderWithin(t, r, in)
			runtime.ReadMemStats(&after)
			switch {
			case err == nil:
				t.Fatalf("rendered; want an error containing %q", want)
			case !strings.HasPrefix(err.Error(), in.OSP.Name+": "):
				t.Errorf("error does not start with the OSP's name: %v", err)
			case !strings.Contains(err.Error(), want):
				t.Errorf("error:\n %v\nwant it to contain\n %s", err, want)
			case len(err.Error()) > 2*maxErrorMessage:
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			bound := uint64(allocBound)
			if raceDetector {
				bound *= 8
			}
			// Renders stopped by the clock allocate as fast as the machine
			// runs; what they keep is bounded like any other's.
			if n := after.TotalAlloc - before.TotalAlloc; n > bound && renderTime > time.Second {
				t.Errorf("the render allocated %s, more than %s", sizeString(int64(n)), sizeString(int64(bound)))
			}
		})
	}
	if _, err := r.Render(goldenInput(t)); err != nil {
		t.Errorf("after the hostile OSPs, a good one fails: %v", err)
	}
	// Nothing a render started may be left running.
	deadline := time.Now().Add(liveness)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines after the hostile renders, %d before", n, goroutines)
	}
}

// TestBudgetFailureIsRemembered: once a revision exceeded its budget, renders
// of it for other MachineDeployments fail at once with the same error, and a
// new revision renders again.
func TestBudgetFailureIsRemembered(t *testing.T) {
	r := NewRenderer()
	in := hostileInput(t, filepath.Join("testdata", "hostile", "nested-range.yaml"))
	in.OSP.UID, in.OSP.ResourceVersion = "hostile-uid", "1"
	first := renderWithin(t, r, in)
	// On a machine busy enough, the clock may stop it before the iterations do.
	if first == nil || !strings.Contains(first.Error(), "not rendered again for this revision") && !strings.Contains(first.Error(), "tried again after") {
		t.Fatalf("first render: %v", first)
	}
	other := in
	other.MachineDeployment = in.MachineDeployment.DeepCopy()
	other.MachineDeployment.Name = "md-2"
	if err := renderWithin(t, r, other); err == nil || err.Error() != first.Error() {
		t.Errorf("another MD: %v, want %v", err, first)
	}
	fixed := other
	fixed.OSP = in.OSP.DeepCopy()
	fixed.OSP.ResourceVersion = "2"
	fixed.OSP.Spec.ProvisioningConfig.Files[0].Content.Inline.Data = "{{ range until 3 }}{{ . }}{{ end }}"
	if err := renderWithin(t, r, fixed); err != nil {
		t.Errorf("the fixed revision: %v", err)
	}
}

// TestTimedOutRevisionIsTriedAgain: running out of time may be the machine's
// fault, so a revision that did is tried again after retryTimedOut; a
// revision that exceeded a limit of work is not.
func TestTimedOutRevisionIsTriedAgain(t *testing.T) {
	r := NewRenderer()
	in := hostileInput(t, filepath.Join("testdata", "hostile", "nested-range.yaml"))
	in.OSP.UID, in.OSP.ResourceVersion = "slow-uid", "1"
	in.OSP.Spec.ProvisioningConfig.Files[0].Content.Inline.Data = "{{ range until 3 }}{{ . }}{{ end }}"
	if err := renderWithin(t, r, in); err != nil {
		t.Fatal(err)
	}
	c, err := r.compiled.get(in.OSP, nil, in.Node.ContainerRuntime)
	if err != nil {
		t.Fatal(err)
	}
	timedOut := errors.New("render budget exceeded: took longer than 1s (tried again after 1m0s)")
	c.failed.Store(&revisionFailure{err: timedOut, retry: time.Now().Add(time.Hour)})
	if err := renderWithin(t, r, in); !errors.Is(err, timedOut) {
		t.Fatalf("before the retry time: %v, want %v", err, timedOut)
	}
	c.failed.Store(&revisionFailure{err: timedOut, retry: time.Now().Add(-time.Second)})
	if err := renderWithin(t, r, in); err != nil {
		t.Fatalf("after the retry time: %v", err)
	}
	if c.failed.Load() != nil {
		t.Error("a successful retry keeps the failure")
	}
	exceededWork := errors.New("render budget exceeded: more than 100000 range iterations and template calls")
	c.failed.Store(&revisionFailure{err: exceededWork})
	if err := renderWithin(t, r, in); !errors.Is(err, exceededWork) {
		t.Fatalf("a limit of work: %v, want %v", err, exceededWork)
	}
}
