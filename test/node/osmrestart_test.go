package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"
	"github.com/osm-apiserver/osm-apiserver/test/node/nodevm"
)

// The restartOSM boot stops the cluster's osm-apiserver while its node
// provisions and starts it again as the harness does: the node's boot
// report must lose no record to that (osm-report keeps them in a spool on
// disk and sends them once the server is back, docs/boot-reports.md).
//
// The moment is the broken mirror's last fix: osm-setup retries 30 s after
// the failure the test has just seen reported, so the outage covers the
// retry's first records at least (kubelet-binaries Started), and it cannot
// overlap the broken phases, whose Failed reports must come within 60 s.
// The Node cannot register before the outage ends either: its CSR waits
// for osm-apiserver's approval, and the join window's checks for the outage.

// osmOutage is how long osm-apiserver stays stopped.
const osmOutage = 60 * time.Second

// spoolDir is osm-report's spool on the node (OSM_REPORT_STATE_DIR/spool).
const spoolDir = "/var/lib/osm-report/spool"

// osmServing is held for reading by the checks of every boot that need
// osm-apiserver to answer at once or within a short bound (a MachineJoin
// that must be refused, a CSR it must decide, a report it must show), and
// for writing by the outage: a check waits for the outage to end and then
// has its whole time, and the outage waits for the checks under way.
var osmServing sync.RWMutex

// osmStopped is set while the test has osm-apiserver stopped; the egress
// proxy counts the connections kube-apiserver could not make to it then in
// osmStoppedDials rather than logging each.
var (
	osmStopped      atomic.Bool
	osmStoppedDials atomic.Int64
)

// whileServing runs f while osm-apiserver is not stopped by the test.
func whileServing(f func() error) error {
	osmServing.RLock()
	defer osmServing.RUnlock()
	return f()
}

// outage is what restartOSM saw.
type outage struct {
	down time.Duration // from the SIGTERM to osm-apiserver serving again
	// held are the records the node's spool held when osm-apiserver was
	// started again, as osm-report names them ("Started kubelet-binaries").
	held []string
}

// steps are the steps of the held records, in order.
func (o *outage) steps() []string {
	var steps []string
	seen := map[string]bool{}
	for _, h := range o.held {
		f := strings.Fields(h)
		if len(f) == 2 && !seen[f[1]] {
			seen[f[1]] = true
			steps = append(steps, f[1])
		}
	}
	return steps
}

// restartOSM stops the harness's osm-apiserver (SIGTERM, as a rollout or a
// node drain stops a replica) for osmOutage while b's node provisions, reads
// which records the node's spool holds, and starts osm-apiserver again with
// `hack/local-cluster.sh osm`, as the harness started it. It fails when
// the spool held nothing: then the outage missed the provisioning.
func restartOSM(ctx context.Context, vm *nodevm.VM, b boot) (*outage, error) {
	osmServing.Lock()
	defer osmServing.Unlock()
	run := filepath.Join(env.dir, "run")
	pidFile := filepath.Join(run, "osm-apiserver.pid")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return nil, fmt.Errorf("the harness's osm-apiserver: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pidFile, err)
	}
	start := time.Now()
	osmStopped.Store(true)
	defer osmStopped.Store(false)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return nil, fmt.Errorf("stopping osm-apiserver (pid %d): %w", pid, err)
	}
	o := &outage{}
	var errs []error
	err = waitFor(ctx, fmt.Sprintf("osm-apiserver (pid %d) to stop", pid), time.Minute, func() (string, error) {
		if syscall.Kill(pid, 0) == nil {
			return "it still runs", nil
		}
		return "", nil
	})
	if err == nil {
		// Records are refused now: kube-apiserver cannot reach the group.
		_, rerr := getBootReport(ctx, b.node)
		if rerr == nil {
			err = fmt.Errorf("BootReport %s was read with osm-apiserver stopped", b.node)
		} else {
			progress("%s: osm-apiserver (pid %d) stopped in %d s, for %d s; the aggregated API answers: %v",
				b.name, pid, int(time.Since(start).Seconds()), int(osmOutage.Seconds()), rerr)
		}
	}
	if err == nil {
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-time.After(time.Until(start.Add(osmOutage))):
		}
	}
	if err == nil {
		o.held, err = spooled(ctx, vm)
		switch {
		case err != nil:
			err = fmt.Errorf("reading the node's spool %s: %w", spoolDir, err)
		case len(o.held) == 0:
			err = fmt.Errorf("osm-apiserver was stopped %d s, and the spool %s of %s held no record: the outage missed the provisioning",
				int(time.Since(start).Seconds()), spoolDir, b.node)
		default:
			progress("%s: the spool of %s holds %d records after %d s: %s", b.name, b.node, len(o.held),
				int(time.Since(start).Seconds()), strings.Join(o.held, ", "))
		}
	}
	errs = append(errs, err)
	// Started again whatever happened: the other boots need it. Its first
	// log stays beside the new one.
	_ = os.Rename(filepath.Join(run, "osm-apiserver.log"), filepath.Join(run, "osm-apiserver-stopped.log"))
	rctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if rerr := testenv.Command(rctx, env.repo, env.harness, "hack/local-cluster.sh", "osm"); rerr != nil {
		errs = append(errs, fmt.Errorf("starting osm-apiserver again: %w", rerr))
	}
	o.down = time.Since(start)
	progress("%s: osm-apiserver serves again after %d s; kube-apiserver's egress could not reach it %d times meanwhile",
		b.name, int(o.down.Seconds()), osmStoppedDials.Load())
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return o, nil
}

// spooled lists the records in the node's spool, oldest first, each as
// its second line names it (phase and step).
func spooled(ctx context.Context, vm *nodevm.VM) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := vm.Agent.Run(ctx, `for f in `+spoolDir+`/*.rec; do [ -e "$f" ] && sed -n 2p "$f"; done; true`)
	if err != nil {
		return nil, err
	}
	var held []string
	for _, line := range strings.Split(out, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			held = append(held, line)
		}
	}
	return held, nil
}

// checkSpoolSent, once b's report is complete: the node's spool is empty,
// osm-report dropped no record in this boot (its warnings in the journal
// end in "dropped"), and the flushers osm-report started are counted.
func checkSpoolSent(ctx context.Context, vm *nodevm.VM, b boot, o *outage) error {
	var left []string
	err := waitFor(ctx, "the spool of "+b.node+" empty", 2*time.Minute, func() (string, error) {
		var err error
		if left, err = spooled(ctx, vm); err != nil {
			return "reading the spool: " + err.Error(), nil
		}
		if len(left) > 0 {
			return fmt.Sprintf("%d records left: %s", len(left), strings.Join(left, ", ")), nil
		}
		return "", nil
	})
	if err != nil {
		return err
	}
	jctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	dropped, err := vm.Agent.Run(jctx, `journalctl -b --no-pager -o cat | grep -E '^osm-report: .*dropped$' || true`)
	if err != nil {
		return fmt.Errorf("the node's journal: %w", err)
	}
	if dropped = strings.TrimSpace(dropped); dropped != "" {
		return fmt.Errorf("osm-report dropped records on %s:\n%s", b.node, dropped)
	}
	units, err := vm.Agent.Run(jctx, `journalctl -b --no-pager -o cat | grep -oE 'osm-report-flush-[0-9]+-[0-9]+' | sort -u | wc -l`)
	if err != nil {
		return fmt.Errorf("the node's journal: %w", err)
	}
	report("%s: osm-apiserver stopped %d s during provisioning (steps %s), serving again after %d s; %d records held in the node's spool (%s) sent after it came back (%s osm-report-flush unit(s) ran), report complete from the node's records, spool empty, none dropped",
		b.label(), int(osmOutage.Seconds()), strings.Join(o.steps(), ", "), int(o.down.Seconds()), len(o.held), strings.Join(o.held, ", "), strings.TrimSpace(units))
	return nil
}
