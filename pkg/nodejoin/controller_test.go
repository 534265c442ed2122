package nodejoin

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	fcache "k8s.io/client-go/tools/cache/testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
)

// running is a fixture whose Controller runs on informers fed by fake sources.
type running struct {
	*fixture
	machineSource, nodeSource *fcache.FakeControllerSource
	// run starts the Controller.
	run func()
}

func startController(t *testing.T) *running {
	t.Helper()
	r := newRunning(t)
	r.run()
	return r
}

// newRunning returns the fixture with its informers running and its
// Controller not yet: run starts it.
func newRunning(t *testing.T) *running {
	t.Helper()
	f := newFixture(t)
	r := &running{fixture: f, machineSource: fcache.NewFakeControllerSource(), nodeSource: fcache.NewFakeControllerSource()}
	machineInformer := informers.NewMachines(r.machineSource)
	nodes := informers.NewNodes(r.nodeSource)
	f.machines, f.nodes = machineInformer.GetIndexer(), nodes.GetIndexer()
	reader := machines.NewMachineReader(f.machines, f.sets, f.nodes)
	f.exchange.Machines = reader
	c := NewController(ControllerConfig{Client: f.client, Machines: reader, MachineInformer: machineInformer, NodeInformer: nodes, TTL: time.Hour})
	c.settle = 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go machineInformer.Run(ctx.Done())
	go nodes.Run(ctx.Done())
	r.run = func() {
		go func() {
			defer close(done)
			if err := c.Run(ctx); err != nil {
				t.Errorf("Run: %v", err)
			}
		}()
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Second): // never run
		}
		r.machineSource.Shutdown()
		r.nodeSource.Shutdown()
	})
	return r
}

// newMachine adds a Machine of the fixture's MD and waits until the
// informer has it.
func (r *running) newMachine(name string) MachineKey {
	r.t.Helper()
	m := machinecontrollertest.Machine(r.ms, name)
	r.machineSource.Add(m)
	r.eventually("machine "+name, func() bool { _, err := r.exchange.Machines.Get("team", name); return err == nil })
	return MachineKey{Namespace: "team", Name: name}
}

func (r *running) eventually(what string, cond func() bool) {
	r.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		r.t.Fatalf("%s: %v", what, err)
	}
}

func (r *running) exists(get func() error) bool {
	err := get()
	if err != nil && !apierrors.IsNotFound(err) {
		r.t.Fatal(err)
	}
	return err == nil
}

func (r *running) credential(key MachineKey) bool {
	return r.exists(func() error {
		_, err := r.client.CoreV1().Secrets(Namespace).Get(context.Background(), AccountName(key), metav1.GetOptions{})
		return err
	})
}

func (r *running) identity(key MachineKey) bool {
	return r.exists(func() error {
		_, err := r.client.CoreV1().ServiceAccounts(Namespace).Get(context.Background(), AccountName(key), metav1.GetOptions{})
		return err
	})
}

// csr creates a kubelet client CSR of key's join identity for node name.
func (r *running) csr(key MachineKey, node string) string {
	r.t.Helper()
	return r.csrNamed(key, node, "csr-"+key.Name+"-"+node)
}

// csrNamed is csr with the CSR's name.
func (r *running) csrNamed(key MachineKey, node, name string) string {
	r.t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		r.t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}}, k)
	if err != nil {
		r.t.Fatal(err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
			Username:   usernamePrefix + AccountName(key),
		},
	}
	if _, err := r.client.CertificatesV1().CertificateSigningRequests().Create(context.Background(), csr, metav1.CreateOptions{}); err != nil {
		r.t.Fatal(err)
	}
	return csr.Name
}

// decision waits for csr's decision and returns its condition.
func (r *running) decision(name string) certificatesv1.CertificateSigningRequestCondition {
	r.t.Helper()
	var got certificatesv1.CertificateSigningRequestCondition
	r.eventually("a decision on "+name, func() bool {
		csr, err := r.client.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || len(csr.Status.Conditions) == 0 {
			return false
		}
		got = csr.Status.Conditions[0]
		return true
	})
	return got
}

// A join gets one client certificate: a second CSR of the identity for its
// own node is denied with the reason, and the first stays the one recorded on
// the identity, where every replica and a restarted leader read it.
func TestControllerApprovesOneCertificatePerJoin(t *testing.T) {
	r := startController(t)
	key := r.newMachine("pool-5d8f7-x2k4q")
	if _, err := r.join("pool", key.Name, "boot-1"); err != nil {
		t.Fatal(err)
	}
	first := r.csr(key, key.Name)
	if c := r.decision(first); c.Type != certificatesv1.CertificateApproved || c.Reason != ReasonApproved {
		t.Fatalf("first CSR: %s %s: %s", c.Type, c.Reason, c.Message)
	}
	second := r.csrNamed(key, key.Name, "csr-again")
	c := r.decision(second)
	if c.Type != certificatesv1.CertificateDenied || c.Reason != ReasonCertificateIssued || !strings.Contains(c.Message, first) {
		t.Errorf("second CSR: %s %s: %s, want denied %s naming %s", c.Type, c.Reason, c.Message, ReasonCertificateIssued, first)
	}
	sa, err := r.client.CoreV1().ServiceAccounts(Namespace).Get(context.Background(), AccountName(key), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := sa.Annotations[annotationApprovedCSR]; !strings.HasPrefix(got, first+"/") {
		t.Errorf("recorded CSR %q, want %s", got, first)
	}
}

// The join identity's CSR for its own node is approved, one for any other
// name denied with the reason; once the Node registers, the credential goes
// and the identity stays (the record that the machine was answered); with
// the Machine the identity goes too.
func TestControllerApprovesOwnNodeAndRevokesAfterJoin(t *testing.T) {
	r := startController(t)
	key := r.newMachine("pool-5d8f7-x2k4q")
	if _, err := r.join("pool", key.Name, "boot-1"); err != nil {
		t.Fatal(err)
	}
	if c := r.decision(r.csr(key, "kube-apiserver-of-someone")); c.Type != certificatesv1.CertificateDenied || c.Reason != ReasonForeignNodeName ||
		!strings.Contains(c.Message, "may ask only for the client certificate of its own node, system:node:pool-5d8f7-x2k4q, not of system:node:kube-apiserver-of-someone") {
		t.Errorf("foreign name: %+v", c)
	}
	if c := r.decision(r.csr(key, key.Name)); c.Type != certificatesv1.CertificateApproved || c.Reason != ReasonApproved {
		t.Errorf("own name: %+v", c)
	}

	r.nodeSource.Add(&metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: metav1.ObjectMeta{Name: key.Name}})
	r.eventually("credential revoked", func() bool { return !r.credential(key) })
	if !r.identity(key) {
		t.Error("the join identity went with the credential")
	}
	// The approver reads the Node through the exchange's informer, which may
	// see it after the controller's did.
	r.eventually("the exchange sees the node", func() bool {
		m, err := r.exchange.Machines.Get(key.Namespace, key.Name)
		if err != nil {
			return false
		}
		_, joined := r.exchange.Machines.NodeOf(m)
		return joined
	})
	if c := r.decision(r.csr(key, key.Name+"-again")); c.Type != certificatesv1.CertificateDenied || c.Reason != ReasonNotJoining {
		t.Errorf("after the join: %+v", c)
	}
	if _, err := r.join("pool", key.Name, "boot-1"); err == nil {
		t.Error("answered after the join")
	}

	m, err := r.exchange.Machines.Get(key.Namespace, key.Name)
	if err != nil {
		t.Fatal(err)
	}
	r.machineSource.Delete(m.DeepCopy()) // as a watch delivers it: not the cached object
	r.eventually("identity gone with the machine", func() bool { return !r.identity(key) })
}

// A credential its machine did not use in time goes; its identity stays, so
// the machine is not answered again.
func TestControllerDeletesExpiredCredentials(t *testing.T) {
	// Answered two hours ago, before the Controller ran: a running one could
	// delete the credential between its Secret and its token.
	r := newRunning(t)
	key := r.newMachine("pool-5d8f7-late")
	r.now = time.Now().Add(-2 * time.Hour)
	if _, err := r.join("pool", key.Name, "boot-1"); err != nil {
		t.Fatal(err)
	}
	r.run()
	r.eventually("expired credential deleted", func() bool { return !r.credential(key) })
	if !r.identity(key) {
		t.Error("the join identity went with the expired credential")
	}
	r.now = time.Now()
	if _, err := r.join("pool", key.Name, "boot-2"); err == nil {
		t.Error("an expired machine was answered again")
	}
}

// CSRs of identities that are no join identity (the namespace's default
// ServiceAccount, say) are denied.
func TestControllerDeniesStrangers(t *testing.T) {
	r := startController(t)
	if _, err := r.client.CoreV1().ServiceAccounts(Namespace).Create(context.Background(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: Namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	name := r.csr(MachineKey{Namespace: "team", Name: "x"}, "x")
	csr, err := r.client.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	csr.Spec.Username = usernamePrefix + "default"
	csr.Name = "csr-default"
	csr.ResourceVersion = ""
	if _, err := r.client.CertificatesV1().CertificateSigningRequests().Create(context.Background(), csr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{name, "csr-default"} {
		if c := r.decision(n); c.Type != certificatesv1.CertificateDenied || c.Reason != ReasonNotJoining {
			t.Errorf("%s: %+v", n, c)
		}
	}
}
