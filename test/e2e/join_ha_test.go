package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
)

const (
	// haMachines boot during TestMachineJoinHAReplicaKillAndRollingRestart.
	haMachines = 200
	// bootstrapRetry is how long osm-bootstrap of the default profiles waits
	// before it posts the MachineJoin again ("retrying in 10s").
	bootstrapRetry = 10 * time.Second
	// bootstrapMaxTime is curl's --max-time of osm-bootstrap's MachineJoin.
	bootstrapMaxTime = 60 * time.Second
)

// TestMachineJoinHAReplicaKillAndRollingRestart: 200 machines of one MD
// boot while two osm-apiserver processes serve them, and (a) one of them,
// the leader, is killed (SIGKILL) and comes back later, then (b) both restart
// one after the other (SIGTERM, each back and ready before the next stops).
// Every machine is answered, for its one boot; its kubelet's CSR is approved
// once, by whichever replica leads, and recorded as the identity's one
// certificate.
//
// The APIService of the local cluster routes to the harness's osm-apiserver
// on one port, so kube-apiserver cannot spread requests over two replicas:
// the harness's server is stopped, and the test drives each replica
// directly, as TestMachineJoinAcrossReplicasRestartAndLeaderChange does
// (over the front proxy, naming the fetch credential's user), each machine's
// attempts alternating between the two as a Service's endpoints would. The
// kubelets' CSRs go through kube-apiserver. Clients retry as osm-bootstrap
// does: on a connection error, a timeout or any answer but 201, after 10 s,
// with the same boot id and boot secret; here a 4xx other than 429 fails
// the test instead (osm-bootstrap would retry it forever).
func TestMachineJoinHAReplicaKillAndRollingRestart(t *testing.T) {
	ns := syncerNamespace(t)
	stopHarnessServer(t)
	replicas := []*joinProcess{newJoinProcess(t, "ha-a"), newJoinProcess(t, "ha-b")}
	var startWG sync.WaitGroup
	for _, r := range replicas {
		startWG.Go(func() { r.start(t) })
	}
	startWG.Wait()

	ms := joinMD(t, ns, "ha")
	names := make([]string, haMachines)
	var wg sync.WaitGroup
	for i := range names {
		names[i] = fmt.Sprintf("ha-5d8f7-%05d", i)
		wg.Go(func() { createMachine(t, ms, names[i]) })
	}
	wg.Wait()
	ref := machinecontroller.Ref{Namespace: ns, Name: "ha"}
	userDataToken(t, ns, "ha") // the leader made the MD's fetch credential
	// Every replica's informers have every Machine once the last is answered.
	// (A probe of a machine of the test, whose boot is then "probe": it is
	// not one of the rollout's.)
	probe := fmt.Sprintf("ha-5d8f7-%05d", haMachines)
	createMachine(t, ms, probe)
	for _, r := range replicas {
		eventually(t, time.Minute, func() error {
			_, err := r.post(ref, ns, osmv1alpha1.MachineJoinSpec{MachineName: probe, BootID: "probe"})
			return err
		})
	}

	m := &haRollout{t: t, ns: ns, ref: ref, names: names, replicas: replicas, start: time.Now(),
		results: make([]haResult, haMachines)}
	released := 0
	release := func(n int) {
		for ; n > 0 && released < haMachines; n-- {
			i := released
			released++
			m.results[i].phase = m.phase()
			wg.Go(func() { m.boot(i) })
			time.Sleep(100 * time.Millisecond)
		}
	}
	// The machines boot in five waves of 40, each while one phase lasts.
	m.setPhase("both up")
	release(40)

	m.setPhase("leader killed")
	leader := m.leader()
	leader.kill(t)
	t.Logf("%s: killed %s (SIGKILL), the leader", m.since(), leader.id)
	release(40)
	leader.start(t)
	t.Logf("%s: %s back", m.since(), leader.id)

	for k, r := range []*joinProcess{replicas[1-slices.Index(replicas, leader)], leader} {
		m.setPhase(fmt.Sprintf("rolling restart %d/2", k+1))
		var phase sync.WaitGroup
		phase.Go(func() { release(40) })
		r.terminate(t)
		t.Logf("%s: stopped %s (SIGTERM)", m.since(), r.id)
		r.start(t)
		t.Logf("%s: %s back", m.since(), r.id)
		phase.Wait()
	}
	m.setPhase("after")
	release(haMachines)
	wg.Wait()
	t.Logf("%s: every machine answered and its CSR made", m.since())
	m.check()
}

// haRollout is the state of TestMachineJoinHAReplicaKillAndRollingRestart.
type haRollout struct {
	t        *testing.T
	ns       string
	ref      machinecontroller.Ref
	names    []string
	replicas []*joinProcess
	start    time.Time

	mu           sync.Mutex
	currentPhase string
	results      []haResult
}

// haResult is what happened to one machine.
type haResult struct {
	phase    string        // in which it booted
	boot     string        // its boot id
	latency  time.Duration // from the first MachineJoin to the answer
	attempts int
	csr      string
	err      error
}

// endpoint is the k-th replica (modulo) of those a Service would route to:
// ready, not terminating.
func (m *haRollout) endpoint(k int) *joinProcess {
	for {
		var ready []*joinProcess
		for _, r := range m.replicas {
			if r.endpoint.Load() {
				ready = append(ready, r)
			}
		}
		if len(ready) > 0 {
			return ready[k%len(ready)]
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (m *haRollout) since() string { return time.Since(m.start).Round(100 * time.Millisecond).String() }

func (m *haRollout) setPhase(p string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.currentPhase = p
}

func (m *haRollout) phase() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.currentPhase
}

// leader is the replica that holds the Lease: the one that logged the
// holder's identity (random) since it started last.
func (m *haRollout) leader() *joinProcess {
	var leader *joinProcess
	// The holder may still be a replica of an earlier test, until the Lease expired.
	eventually(m.t, 30*time.Second, func() error {
		holder := leaseHolder(m.t)
		for _, r := range m.replicas {
			if r.loggedSinceStart(holder) {
				leader = r
				return nil
			}
		}
		return fmt.Errorf("the Lease is held by %s, no replica of the test", holder)
	})
	return leader
}

// boot is machine i's osm-bootstrap and kubelet: the MachineJoin until
// answered, then the kubelet's client CSR with the answer's credential.
func (m *haRollout) boot(i int) {
	r := &m.results[i]
	r.boot = fmt.Sprintf("boot-%05d", i)
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	spec := osmv1alpha1.MachineJoinSpec{MachineName: m.names[i], BootID: r.boot, BootSecret: hex.EncodeToString(secret)}
	t0 := time.Now()
	var answer *osmv1alpha1.MachineJoin
	for {
		replica := m.endpoint(i + r.attempts)
		r.attempts++
		var err error
		answer, err = replica.post(m.ref, m.ns, spec)
		if err == nil {
			break
		}
		var status *apierrors.StatusError
		if errors.As(err, &status) && status.ErrStatus.Code < 500 && status.ErrStatus.Code != http.StatusTooManyRequests {
			r.err = fmt.Errorf("MachineJoin of %s, attempt %d at %s: %w", m.names[i], r.attempts, replica.id, err)
			return
		}
		if time.Since(t0) > 2*time.Minute {
			r.err = fmt.Errorf("MachineJoin of %s: no answer after %d attempts: %w", m.names[i], r.attempts, err)
			return
		}
		time.Sleep(bootstrapRetry)
	}
	r.latency = time.Since(t0)
	token, err := kubeconfigToken(answer)
	if err != nil {
		r.err = fmt.Errorf("answer for %s: %w", m.names[i], err)
		return
	}
	r.csr, r.err = kubeletCSR(m.t, token, m.names[i])
}

// check asserts every machine answered, for its boot only, with one CSR
// approved once and recorded, and logs the latencies by phase.
func (m *haRollout) check() {
	t := m.t
	byPhase := map[string][]time.Duration{}
	var phases []string
	retried := 0
	for i, r := range m.results {
		if r.err != nil {
			t.Errorf("machine %d: %v", i, r.err)
			continue
		}
		if _, ok := byPhase[r.phase]; !ok {
			phases = append(phases, r.phase)
		}
		byPhase[r.phase] = append(byPhase[r.phase], r.latency)
		byPhase["all"] = append(byPhase["all"], r.latency)
		if r.attempts > 1 {
			retried++
		}
	}
	if t.Failed() {
		return
	}
	for _, p := range append(phases, "all") {
		l := byPhase[p]
		slices.Sort(l)
		q := func(p int) time.Duration { return l[(len(l)-1)*p/100].Round(time.Millisecond) }
		t.Logf("MachineJoin latency, %s (%d machines): p50 %s, p99 %s, max %s", p, len(l), q(50), q(99), l[len(l)-1].Round(time.Millisecond))
	}
	t.Logf("%d of %d machines retried their MachineJoin", retried, haMachines)

	// Every CSR approved, once, and recorded as its identity's one certificate.
	start := time.Now()
	eventually(t, 2*time.Minute, func() error {
		pending := 0
		for _, r := range m.results {
			csr, err := env.kube.CertificatesV1().CertificateSigningRequests().Get(context.Background(), r.csr, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
				return c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied
			}) {
				pending++
			}
		}
		if pending > 0 {
			return fmt.Errorf("%d of %d CSRs not decided", pending, haMachines)
		}
		return nil
	})
	t.Logf("every CSR decided %s after the last was made", time.Since(start).Round(time.Millisecond))
	for i, r := range m.results {
		csr, err := env.kube.CertificatesV1().CertificateSigningRequests().Get(context.Background(), r.csr, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		approved := 0
		for _, c := range csr.Status.Conditions {
			switch c.Type {
			case certificatesv1.CertificateApproved:
				approved++
			case certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
				t.Errorf("CSR %s of %s: %s %s: %s", r.csr, m.names[i], c.Type, c.Reason, c.Message)
			}
		}
		if approved != 1 {
			t.Errorf("CSR %s of %s: approved %d times, want once", r.csr, m.names[i], approved)
		}
		identity, err := env.kube.CoreV1().ServiceAccounts(nodejoin.Namespace).Get(context.Background(),
			nodejoin.AccountName(nodejoin.MachineKey{Namespace: m.ns, Name: m.names[i]}), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("join identity of %s: %v", m.names[i], err)
		}
		if got, want := identity.Annotations["osm.k8c.io/approved-csr"], csr.Name+"/"+string(csr.UID); got != want {
			t.Errorf("join identity of %s records approved CSR %q, want %q", m.names[i], got, want)
		}
		if got := identity.Annotations["osm.k8c.io/boot-id"]; got != r.boot {
			t.Errorf("join identity of %s is of boot %q, want %q", m.names[i], got, r.boot)
		}
	}
	// No machine is answered for another boot, at either replica.
	for i, name := range m.names {
		replica := m.replicas[i%len(m.replicas)]
		_, err := replica.post(m.ref, m.ns, osmv1alpha1.MachineJoinSpec{MachineName: name, BootID: "another-boot"})
		refused(t, name+": another boot at "+replica.id, err, "for another boot")
	}
}

// kubeconfigToken is the token of the kubelet bootstrap kubeconfig of an
// answer (joinToken, without failing the test).
func kubeconfigToken(answer *osmv1alpha1.MachineJoin) (string, error) {
	cfg, err := clientcmd.Load(answer.Status.Kubeconfig)
	if err != nil {
		return "", err
	}
	for _, user := range cfg.AuthInfos {
		if user.Token != "" {
			return user.Token, nil
		}
	}
	return "", errors.New("no token in the kubeconfig")
}

// startMark starts each run's lines in a joinProcess's log.
const startMark = "=== e2e: start"

// joinProcess is an osm-apiserver process of the harness's binary, a replica
// on a port of its own that it keeps across restarts, standing for
// election on syncerLease. It authenticates as the cluster's admin, as the
// in-process replicas do.
type joinProcess struct {
	id, addr, port, dir, log string
	cmd                      *exec.Cmd
	exited                   chan struct{}
	client                   *http.Client
	probe                    *http.Client // as the kubelet probes: no client certificate
	// endpoint says a Service would route to it: its /readyz answered 200
	// since it started, and it is not terminating.
	endpoint atomic.Bool
}

func newJoinProcess(t *testing.T, id string) *joinProcess {
	t.Helper()
	port := strconv.Itoa(freePort(t))
	cert, err := tls.LoadX509KeyPair(filepath.Join(env.pki, "front-proxy-client.crt"), filepath.Join(env.pki, "front-proxy-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := &joinProcess{id: id, port: port, addr: "https://127.0.0.1:" + port, dir: dir, log: filepath.Join(dir, "osm-apiserver.log"),
		client: &http.Client{Timeout: bootstrapMaxTime, Transport: &http.Transport{
			DialContext:     (&net.Dialer{Timeout: 10 * time.Second}).DialContext,                         // curl --connect-timeout 10
			TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true}, //nolint:gosec // the test's own server, self-signed
		}},
		probe: &http.Client{Timeout: time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the test's own server, self-signed
		}}}
	t.Cleanup(func() {
		if p.cmd != nil {
			p.kill(t)
		}
		if t.Failed() {
			if data, err := os.ReadFile(p.log); err == nil {
				lines := strings.Split(strings.TrimSpace(string(data)), "\n")
				t.Logf("last lines of %s's log:\n%s", id, strings.Join(lines[max(0, len(lines)-30):], "\n"))
			}
		}
	})
	return p
}

// start runs the process and waits until it is ready, as a readiness probe
// on /readyz, and answers MachineJoins.
func (p *joinProcess) start(t *testing.T) {
	t.Helper()
	bin := processBinary(t)
	log, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = log.Close() }()
	fmt.Fprintf(log, "%s %s\n", startMark, time.Now().Format(time.RFC3339Nano))
	p.cmd = exec.Command(bin, "serve",
		"--bind-address=127.0.0.1", "--secure-port="+p.port, "--cert-dir="+filepath.Join(p.dir, "certs"),
		// Its own certificate in memory: self-managed, it would take over the
		// harness's serving-certificate Secret and APIService caBundle.
		"--serving-cert-mode=self-signed",
		"--kubeconfig="+env.kubeconfig, "--authentication-kubeconfig="+env.kubeconfig, "--authorization-kubeconfig="+env.kubeconfig,
		"--disable-default-osps", "--syncer-workers=8",
		"--leader-elect-resource-name="+syncerLease, "--leader-elect-lease-duration=4s",
		"--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=500ms")
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", p.id, err)
	}
	p.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		close(exited)
	}(p.cmd, p.exited)
	eventually(t, 2*time.Minute, func() error {
		select {
		case <-p.exited:
			t.Fatalf("%s exited while starting", p.id)
		default:
		}
		resp, err := p.probe.Get(p.addr + "/readyz")
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: /readyz answered %s", p.id, resp.Status)
		}
		return nil
	})
	p.endpoint.Store(true)
	eventually(t, 2*time.Minute, func() error {
		_, err := p.post(machinecontroller.Ref{}, testNamespace, osmv1alpha1.MachineJoinSpec{MachineName: "probe", BootID: "probe"})
		// Answering, and refusing nobody's request: its informers listed and
		// it knows the front proxy (else the caller is system:anonymous).
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "is not the fetch credential of a MachineDeployment") {
			return nil
		}
		return fmt.Errorf("replica %s: %w", p.id, err)
	})
}

var processBin struct {
	once sync.Once
	path string
	err  error
}

// processBinary is the harness's osm-apiserver binary, built once if the
// harness did not build one (a reused cluster).
func processBinary(t *testing.T) string {
	t.Helper()
	processBin.once.Do(func() {
		processBin.path = filepath.Join(env.dir, "bin", "osm-apiserver")
		if fileExists(processBin.path) {
			return
		}
		// In the state dir: `hack/local-cluster.sh down` removes it.
		processBin.path = filepath.Join(env.dir, "e2e-bin", "osm-apiserver")
		processBin.err = command(5*time.Minute, env.repo, nil, "go", "build", "-o", processBin.path, "./cmd/osm-apiserver")
	})
	if processBin.err != nil {
		t.Fatalf("building osm-apiserver: %v", processBin.err)
	}
	return processBin.path
}

// kill stops the process with SIGKILL: no graceful shutdown, the Lease not
// released.
func (p *joinProcess) kill(t *testing.T) {
	p.stop(t, syscall.SIGKILL)
}

// terminate stops the process with SIGTERM, as a rolling restart does:
// first it is no endpoint any more, as a terminating pod. A killed one stays
// an endpoint until it is back: it refuses connections meanwhile.
func (p *joinProcess) terminate(t *testing.T) {
	p.endpoint.Store(false)
	p.stop(t, syscall.SIGTERM)
}

func (p *joinProcess) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("stopping %s: %v", p.id, err)
	}
	select {
	case <-p.exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not exit after %s", p.id, sig)
	}
	p.cmd = nil
}

// loggedSinceStart says whether the process logged s since it started last.
func (p *joinProcess) loggedSinceStart(s string) bool {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return false
	}
	if i := bytes.LastIndex(data, []byte(startMark)); i >= 0 {
		data = data[i:]
	}
	return bytes.Contains(data, []byte(s))
}

// post posts a MachineJoin as the fetch credential of MD ref (postJoin),
// without failing the test: it runs in the machines' goroutines.
func (p *joinProcess) post(ref machinecontroller.Ref, ns string, spec osmv1alpha1.MachineJoinSpec) (*osmv1alpha1.MachineJoin, error) {
	return postJoin(p.client, p.addr, p.id, ref, ns, spec)
}
