package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// osmProcess is an extra osm-apiserver replica the test runs beside the
// harness's, with a Lease of its own.
type osmProcess struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

// startReplica runs the osm-apiserver binary as one more replica, electing on
// lease, with the harness's certificates and identity.
func startReplica(t *testing.T, bin, lease, id string) *osmProcess {
	t.Helper()
	port := freePort(t)
	kubeconfig := filepath.Join(env.dir, "osm-apiserver.kubeconfig")
	if _, err := os.Stat(kubeconfig); err != nil {
		kubeconfig = env.kubeconfig
	}
	p := &osmProcess{log: filepath.Join(t.TempDir(), id+".log"), exited: make(chan struct{})}
	out, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, "serve", "--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file="+filepath.Join(env.dir, "pki/osm-apiserver.crt"),
		"--tls-private-key-file="+filepath.Join(env.dir, "pki/osm-apiserver.key"),
		"--kubeconfig="+kubeconfig, "--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--disable-default-osps", "--leader-elect-resource-name="+lease,
		"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=500ms")
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
		_ = out.Close() // the process is gone; the log is read by name
		if t.Failed() {
			data, _ := os.ReadFile(p.log)
			t.Logf("log of replica %s:\n%s", id, lastLines(string(data), 30))
		}
	})
	return p
}

// waitLeads waits until the replica has started its syncer.
func (p *osmProcess) waitLeads(t *testing.T, name string) {
	t.Helper()
	eventually(t, time.Minute, func() error {
		data, _ := os.ReadFile(p.log)
		select {
		case <-p.exited:
			t.Fatalf("replica %s exited:\n%s", name, lastLines(string(data), 20))
		default:
		}
		if !strings.Contains(string(data), "Starting syncer") {
			return fmt.Errorf("replica %s does not lead", name)
		}
		return nil
	})
}

// leads says whether the replica has started its syncer.
func (p *osmProcess) leads() bool {
	data, _ := os.ReadFile(p.log)
	return strings.Contains(string(data), "Starting syncer")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestSyncerProcessReplicasAndKill runs two more osm-apiserver processes on a
// Lease of their own: one leads, the other waits; SIGKILL of the leader in the
// middle of syncing 100 MachineDeployments hands over to the other, and
// everything converges with nothing duplicated or lost.
func TestSyncerProcessReplicasAndKill(t *testing.T) {
	bin := osmBinary(t)
	lease := fmt.Sprintf("e2e-replicas-%d", time.Now().UnixNano()%1_000_000)
	a := startReplica(t, bin, lease, "a")
	a.waitLeads(t, "a")
	b := startReplica(t, bin, lease, "b")
	time.Sleep(5 * time.Second) // Longer than the lease: b would have taken over if a did not hold it.
	if b.leads() {
		t.Fatal("two replicas lead at once")
	}

	ns := syncerNamespace(t)
	osp := "e2e-syncer-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	const count = 100
	forEach(count, func(i int) { createMD(t, syncerMD(ns, fmt.Sprintf("md-%03d", i), osp, "1")) })
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	b.waitLeads(t, "b")
	eventually(t, 2*time.Minute, func() error { return payloadsIn(ns, 2*count) })
	for i := range count {
		ref := machinecontroller.Ref{Namespace: ns, Name: fmt.Sprintf("md-%03d", i)}
		if n := countOwned(t, ref); n != 5 {
			t.Errorf("%s: %d secrets, want 5", ref, n)
		}
	}
}
