package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
	"github.com/osm-apiserver/osm-apiserver/pkg/server"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// joinReplica is an in-process osm-apiserver the test posts MachineJoins to
// directly, as kube-apiserver does: over the front proxy, naming the caller.
type joinReplica struct {
	*syncerReplica
	id, addr string
}

// startJoinReplica runs replica id with a retry window of window.
func startJoinReplica(t *testing.T, id string, window time.Duration) *joinReplica {
	t.Helper()
	r := &joinReplica{id: id}
	r.syncerReplica = startSyncer(t, id, func(c *server.Config) {
		c.MachineJoin.RetryWindow = window
		r.addr = c.Generic.LoopbackClientConfig.Host
	})
	eventually(t, time.Minute, func() error {
		_, err := r.join(t, machinecontroller.Ref{}, "", "probe", "probe")
		// Answering, and refusing nobody's request: its informers listed and
		// it knows the front proxy (else the caller is system:anonymous).
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "is not the fetch credential of a MachineDeployment") {
			return nil
		}
		return fmt.Errorf("replica %s: %w", id, err)
	})
	return r
}

// join posts a MachineJoin for machine as the fetch credential of MD ref,
// as kube-apiserver passes it on (postJoin).
func (r *joinReplica) join(t *testing.T, ref machinecontroller.Ref, ns, machine, boot string) (*osmv1alpha1.MachineJoin, error) {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(env.pki, "front-proxy-client.crt"), filepath.Join(env.pki, "front-proxy-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	// The replica's serving certificate is self-signed for this test only.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true}}} //nolint:gosec // the test's own in-process server
	if ns == "" {
		ns = testNamespace
	}
	return postJoin(client, r.addr, r.id, ref, ns, osmv1alpha1.MachineJoinSpec{MachineName: machine, BootID: boot})
}

// postJoin posts a MachineJoin to the replica id at addr as the fetch
// credential of MD ref, as kube-apiserver passes it on: client authenticates
// with the front proxy's certificate, the user is in its headers. It fails
// no test: machines' goroutines call it.
func postJoin(client *http.Client, addr, id string, ref machinecontroller.Ref, ns string, spec osmv1alpha1.MachineJoinSpec) (*osmv1alpha1.MachineJoin, error) {
	body, err := json.Marshal(&osmv1alpha1.MachineJoin{
		TypeMeta: metav1.TypeMeta{APIVersion: osmv1alpha1.SchemeGroupVersion.String(), Kind: "MachineJoin"},
		Spec:     spec,
	})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, addr+"/apis/osm.k8c.io/v1alpha1/namespaces/"+ns+"/machinejoins", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Remote-User", "system:serviceaccount:"+tokens.FetchNamespace+":"+tokens.FetchAccessName(ref))
	for _, g := range []string{"system:serviceaccounts", "system:serviceaccounts:" + tokens.FetchNamespace, "system:authenticated"} {
		req.Header.Add("X-Remote-Group", g)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusCreated {
		var status metav1.Status
		if err := json.NewDecoder(resp.Body).Decode(&status); err != nil || status.Code == 0 {
			return nil, fmt.Errorf("replica %s answered %s", id, resp.Status)
		}
		return nil, &apierrors.StatusError{ErrStatus: status}
	}
	var answer osmv1alpha1.MachineJoin
	return &answer, json.NewDecoder(resp.Body).Decode(&answer)
}

// stopHarnessServer stops the harness's osm-apiserver until the test ends,
// so that only the test's replicas lead, approve and clean up; it starts
// again, as hack/local-cluster.sh starts it, when the test ends.
func stopHarnessServer(t *testing.T) {
	t.Helper()
	t.Cleanup(pauseHarnessServer(t))
}

// pauseHarnessServer stops the harness's osm-apiserver and returns what
// starts it again (once; the test's end does it if the test did not).
func pauseHarnessServer(t *testing.T) (resume func()) {
	t.Helper()
	pidFile := filepath.Join(env.dir, "run", "osm-apiserver.pid")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the harness's osm-apiserver: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("%s: %v", pidFile, err)
	}
	var once sync.Once
	resume = func() {
		once.Do(func() {
			if err := startHarnessServer(serverArgs()); err != nil {
				t.Errorf("restarting the harness's osm-apiserver: %v", err)
			}
		})
	}
	t.Cleanup(resume)
	// It releases its Lease when it stops gracefully.
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("stopping the harness's osm-apiserver (pid %d): %v", pid, err)
	}
	eventually(t, 30*time.Second, func() error {
		if syscall.Kill(pid, 0) == nil {
			return fmt.Errorf("osm-apiserver (pid %d) still runs", pid)
		}
		return nil
	})
	return resume
}

// startHarnessServer (re)starts the harness's osm-apiserver with args, as
// hack/local-cluster.sh starts it.
func startHarnessServer(args []string) error {
	harness := []string{"OSM_CLUSTER_DIR=" + env.dir, "OSM_APISERVER_ARGS=" + strings.Join(args, " ")}
	if bin := filepath.Join(env.dir, "bin", "osm-apiserver"); fileExists(bin) {
		harness = append(harness, "OSM_APISERVER_BIN="+bin)
	}
	return command(3*time.Minute, env.repo, harness, "hack/local-cluster.sh", "osm")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestMachineJoinAcrossReplicasRestartAndLeaderChange: a machine is answered
// once whichever replica is asked, before and after replicas restart; the
// same boot again only within the retry window; and the CSR approver and
// the cleanup carry on with whoever leads next. Only the test's replicas run:
// the harness's osm-apiserver is stopped meanwhile.
func TestMachineJoinAcrossReplicasRestartAndLeaderChange(t *testing.T) {
	ns := syncerNamespace(t)
	stopHarnessServer(t)
	const window = 3 * time.Second
	replicas := map[string]*joinReplica{"join-a": startJoinReplica(t, "join-a", window), "join-b": startJoinReplica(t, "join-b", window)}
	ms := joinMD(t, ns, "pool")
	createMachine(t, ms, "pool-5d8f7-first")
	createMachine(t, ms, "pool-5d8f7-second")
	ref := machinecontroller.Ref{Namespace: ns, Name: "pool"}
	userDataToken(t, ns, "pool") // the leader has made the MD's fetch credential
	first := nodejoin.MachineKey{Namespace: ns, Name: "pool-5d8f7-first"}

	// Answered by one replica, again to the same boot by the other, to no other boot.
	var answer *osmv1alpha1.MachineJoin
	eventually(t, 30*time.Second, func() error { // until a's informers have the Machines
		var err error
		answer, err = replicas["join-a"].join(t, ref, ns, first.Name, "boot-a")
		return err
	})
	if _, err := replicas["join-b"].join(t, ref, ns, first.Name, "boot-a"); err != nil {
		t.Errorf("the same boot at the other replica: %v", err)
	}
	refused(t, "another boot at the other replica", errOf(replicas["join-b"].join(t, ref, ns, first.Name, "boot-b")), "for another boot")
	join := joinToken(t, answer)

	// The leader goes; the other decides the CSRs and revokes the credential
	// once the Node is there.
	leader := leaseHolder(t)
	id := strings.SplitN(leader, "_", 2)[0]
	if _, ok := replicas[id]; !ok {
		t.Fatalf("leader %q is no replica of the test", leader)
	}
	replicas[id].stop()
	delete(replicas, id)
	t.Logf("stopped the leader %s", id)
	foreign, err := kubeletCSR(t, join, "someone-else")
	if err != nil {
		t.Fatal(err)
	}
	if c := csrDecision(t, foreign); c.Type != certificatesv1.CertificateDenied || c.Reason != nodejoin.ReasonForeignNodeName {
		t.Errorf("foreign CSR after the leader change: %s %s: %s", c.Type, c.Reason, c.Message)
	}
	own, err := kubeletCSR(t, join, first.Name)
	if err != nil {
		t.Fatal(err)
	}
	if c := csrDecision(t, own); c.Type != certificatesv1.CertificateApproved {
		t.Errorf("own CSR after the leader change: %s %s: %s", c.Type, c.Reason, c.Message)
	}
	createNode(t, first.Name)
	eventually(t, 30*time.Second, func() error {
		_, err := env.kube.CoreV1().Secrets(nodejoin.Namespace).Get(context.Background(), nodejoin.AccountName(first), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("join credential of %s still there", first)
	})

	// Every replica restarts: what was answered stays answered.
	for _, r := range replicas {
		r.stop()
	}
	c := startJoinReplica(t, "join-c", window)
	refused(t, "a machine with a node, after the restart", errOf(c.join(t, ref, ns, first.Name, "boot-a")), "has joined as node "+first.Name)
	second := "pool-5d8f7-second"
	if _, err := c.join(t, ref, ns, second, "boot-z"); err != nil {
		t.Fatalf("a new machine after the restart: %v", err)
	}
	time.Sleep(window + time.Second)
	refused(t, "the same boot after the retry window", errOf(c.join(t, ref, ns, second, "boot-z")), "not later")
	refused(t, "another boot after the restart", errOf(c.join(t, ref, ns, second, "boot-y")), "for another boot")
}
