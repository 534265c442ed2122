package node

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
	"github.com/osm-apiserver/osm-apiserver/test/node/nodevm"
)

// While a machine provisions, between the answer to its MachineJoin and its
// Node's registration, its join credential is live: that is when the
// approver's rules matter. The test holds the Node's registration back (a
// ValidatingAdmissionPolicy refusing to create that one Node) so that the
// checks below see this state for sure, then lets the kubelet register.

// annotationApprovedCSR is where osm-apiserver records the one client CSR a
// join identity was approved (pkg/nodejoin).
const annotationApprovedCSR = "osm.k8c.io/approved-csr"

// joinWindowTimeout bounds the wait for the node's own CSR: the broken
// mirror's failures come between the answer and the kubelet's start.
const joinWindowTimeout = 40 * time.Minute

// holdRegistration makes kube-apiserver refuse to create b's Node until the
// returned release is called (safe to call more than once, concurrently).
func holdRegistration(ctx context.Context, b boot) (release func(), err error) {
	name := "node-test-hold-" + b.name
	policies := env.kube.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	bindings := env.kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	fail := admissionregistrationv1.Fail
	_, err = policies.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"nodes"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: fmt.Sprintf("object.metadata.name != %q", b.node),
				Message:    "node-test holds the registration of " + b.node + " while it checks the join credential",
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("ValidatingAdmissionPolicy %s: %w", name, err)
	}
	_, err = bindings.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		_ = policies.Delete(ctx, name, metav1.DeleteOptions{})
		return nil, fmt.Errorf("ValidatingAdmissionPolicyBinding %s: %w", name, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = bindings.Delete(ctx, name, metav1.DeleteOptions{})
			_ = policies.Delete(ctx, name, metav1.DeleteOptions{})
			progress("%s: Node %s may register now", b.name, b.node)
		})
	}, nil
}

// checkJoinWindow checks, after b's MachineJoin was answered and before its
// Node registers (held back by holdRegistration), that
//   - a MachineJoin for the machine from another boot is refused as answered;
//   - the join credential read from the VM authenticates as the machine's join
//     identity, and a CSR it makes for another node name is created and
//     denied by osm-apiserver as OSMForeignNodeName;
//   - the node's own CSR is approved by osm-apiserver as OSMMachineJoin and
//     recorded as the identity's one certificate, and a second CSR for its own
//     name is denied as OSMCertificateIssued.
func checkJoinWindow(ctx context.Context, vm *nodevm.VM, b boot) error {
	ctx, cancel := context.WithTimeout(ctx, joinWindowTimeout)
	defer cancel()
	account := nodejoin.AccountName(nodejoin.MachineKey{Namespace: testNamespace, Name: b.node})
	var rec nodejoin.Record
	err := waitFor(ctx, "the MachineJoin of "+b.node+" answered", joinWindowTimeout, func() (string, error) {
		sa, err := env.kube.CoreV1().ServiceAccounts(nodejoin.Namespace).Get(ctx, account, metav1.GetOptions{})
		if err != nil {
			return "join identity " + account + ": " + err.Error(), nil
		}
		var ok bool
		if rec, ok = nodejoin.ParseRecord(sa); !ok {
			return "", fmt.Errorf("service account %s/%s is no join identity", nodejoin.Namespace, account)
		}
		return "", nil
	})
	if err != nil {
		return err
	}
	progress("%s: MachineJoin of %s answered at %s for boot %s", b.name, b.node, rec.AnsweredAt.Format(time.RFC3339), rec.BootID)
	if err := notRegistered(ctx, b); err != nil {
		return err
	}

	// Another boot of the machine (a copy of the disk, a clone of the VM)
	// is not answered: the refusal must say why, not be one for another cause
	// (a wrong credential, a joined machine).
	userData, err := bootstrapUserData(ctx, b.md)
	if err != nil {
		return err
	}
	fetch, err := userDataToken(userData)
	if err != nil {
		return err
	}
	otherBoot := randomHex(16)
	err = whileServing(func() error {
		_, err := asToken(fetch).osm.OsmV1alpha1().MachineJoins(testNamespace).Create(ctx, &osmv1alpha1.MachineJoin{
			Spec: osmv1alpha1.MachineJoinSpec{MachineName: b.node, BootID: otherBoot, BootSecret: randomHex(16)}}, metav1.CreateOptions{})
		return err
	})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "for another boot; it is answered once") {
		return fmt.Errorf("a MachineJoin of %s from another boot while it provisions: want 403 \"answered … for another boot\": %w", b.node, errOrAnswered(err))
	}
	progress("%s: a MachineJoin from another boot while %s provisions: %v", b.name, b.node, err)

	// The live join credential, as the VM got it.
	var join string
	err = waitFor(ctx, "the join credential on "+b.node, joinWindowTimeout, func() (string, error) {
		actx, acancel := context.WithTimeout(ctx, 30*time.Second)
		defer acancel()
		kubeconfig, err := vm.Agent.Run(actx, "cat /etc/kubernetes/bootstrap-kubelet.conf")
		if err != nil {
			return "reading /etc/kubernetes/bootstrap-kubelet.conf: " + err.Error(), nil
		}
		if join, err = kubeconfigToken([]byte(kubeconfig)); err != nil {
			return "", fmt.Errorf("the VM's bootstrap kubeconfig: %w", err)
		}
		return "", nil
	})
	if err != nil {
		return err
	}
	joinClient := asToken(join).kube
	review, err := joinClient.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("the VM's join credential while %s provisions: %w", b.node, err)
	}
	if u := review.Status.UserInfo.Username; u != joinUser(b.node) {
		return fmt.Errorf("the VM's join credential authenticates as %q, want %s", u, joinUser(b.node))
	}

	foreign, err := decidedCSR(ctx, joinClient, b, "system:node:not-"+b.node)
	if err != nil {
		return fmt.Errorf("a CSR for a foreign name with the live join credential: %w", err)
	}
	if err := deniedAs(foreign, nodejoin.ReasonForeignNodeName); err != nil {
		return fmt.Errorf("a CSR for a foreign name with the live join credential: %w", err)
	}
	progress("%s: the live join credential's CSR %s for system:node:not-%s: denied %s", b.name, foreign.Name, b.node, nodejoin.ReasonForeignNodeName)

	// The kubelet's own CSR, approved by osm-apiserver.
	var own certificatesv1.CertificateSigningRequest
	err = waitFor(ctx, "the client CSR of "+b.node+" approved and issued", joinWindowTimeout, func() (string, error) {
		var err error
		own, err = nodeClientCSR(ctx, b)
		if err != nil || own.Name == "" {
			return "no approved and issued CSR of the join identity for system:node:" + b.node, err
		}
		return "", nil
	}, func() string { return guestUnits(ctx, vm) })
	if err != nil {
		return err
	}
	if reason := approvalReason(own); reason != nodejoin.ReasonApproved {
		return fmt.Errorf("CSR %s of %s was approved with reason %q, want osm-apiserver's %s", own.Name, b.node, reason, nodejoin.ReasonApproved)
	}
	sa, err := env.kube.CoreV1().ServiceAccounts(nodejoin.Namespace).Get(ctx, account, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if got, want := sa.Annotations[annotationApprovedCSR], own.Name+"/"+string(own.UID); got != want {
		return fmt.Errorf("join identity %s records approved CSR %q, want %q", account, got, want)
	}
	if err := notRegistered(ctx, b); err != nil {
		return err
	}
	second, err := decidedCSR(ctx, joinClient, b, "system:node:"+b.node)
	if err != nil {
		return fmt.Errorf("a second CSR for %s with the live join credential: %w", b.node, err)
	}
	if err := deniedAs(second, nodejoin.ReasonCertificateIssued); err != nil {
		return fmt.Errorf("a second CSR for %s with the live join credential: %w", b.node, err)
	}
	if err := notRegistered(ctx, b); err != nil {
		return err
	}
	progress("%s: %s's CSR %s approved %s; a second CSR %s for its name: denied %s", b.name, b.node, own.Name, nodejoin.ReasonApproved, second.Name, nodejoin.ReasonCertificateIssued)
	return nil
}

// notRegistered fails once b's Node exists: the join window's checks hold
// only before.
func notRegistered(ctx context.Context, b boot) error {
	_, err := env.kube.CoreV1().Nodes().Get(ctx, b.node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		return fmt.Errorf("node %s registered while the test held its registration", b.node)
	}
	return err
}

// nodeClientCSR is the approved and issued kubelet client CSR the join
// identity of b's machine made for b's node (zero if none yet).
func nodeClientCSR(ctx context.Context, b boot) (certificatesv1.CertificateSigningRequest, error) {
	list, err := env.kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		return certificatesv1.CertificateSigningRequest{}, nil // kube-apiserver is busy; ask again
	}
	for _, csr := range list.Items {
		if csr.Spec.Username != joinUser(b.node) || csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName ||
			!approved(csr) || len(csr.Status.Certificate) == 0 {
			continue
		}
		cn, err := csrCommonName(csr)
		if err != nil {
			return certificatesv1.CertificateSigningRequest{}, fmt.Errorf("CSR %s of the join identity of %s: %w", csr.Name, b.node, err)
		}
		if cn != "system:node:"+b.node {
			return certificatesv1.CertificateSigningRequest{}, fmt.Errorf("CSR %s of the join identity of %s is for %q, want system:node:%s", csr.Name, b.node, cn, b.node)
		}
		return csr, nil
	}
	return certificatesv1.CertificateSigningRequest{}, nil
}

func csrCommonName(csr certificatesv1.CertificateSigningRequest) (string, error) {
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil {
		return "", errors.New("no PEM request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return "", err
	}
	return req.Subject.CommonName, nil
}

// decidedCSR creates, with client, a kubelet client CSR for subject and
// waits until it is decided (osm-apiserver decides: not while it is
// stopped). Creating it must succeed: a refusal to authenticate or
// authorize is not the approver's decision.
func decidedCSR(ctx context.Context, client kubernetes.Interface, b boot, subject string) (csr *certificatesv1.CertificateSigningRequest, err error) {
	osmServing.RLock()
	defer osmServing.RUnlock()
	csr, err = clientCSR(ctx, client, subject)
	if err != nil {
		return nil, fmt.Errorf("creating it: %w", err)
	}
	defer func() {
		_ = env.kube.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), csr.Name, metav1.DeleteOptions{})
	}()
	err = waitFor(ctx, "CSR "+csr.Name+" decided", 2*time.Minute, func() (string, error) {
		got, err := env.kube.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
		if err != nil {
			return err.Error(), nil
		}
		csr = got
		if len(got.Status.Conditions) == 0 {
			return "pending", nil
		}
		return "", nil
	})
	return csr, err
}

// deniedAs checks that csr is denied, not approved, with reason.
func deniedAs(csr *certificatesv1.CertificateSigningRequest, reason string) error {
	if approved(*csr) {
		return fmt.Errorf("CSR %s was approved (%s)", csr.Name, approvalReason(*csr))
	}
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateDenied && c.Status == corev1.ConditionTrue {
			if c.Reason != reason {
				return fmt.Errorf("CSR %s was denied with reason %s (%s), want %s", csr.Name, c.Reason, c.Message, reason)
			}
			return nil
		}
	}
	return fmt.Errorf("CSR %s is not denied: %v", csr.Name, csr.Status.Conditions)
}

func approvalReason(csr certificatesv1.CertificateSigningRequest) string {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue {
			return c.Reason
		}
	}
	return ""
}

// clientCSR asks, with client, for the kubelet client certificate of
// subject (a common name in group system:nodes).
func clientCSR(ctx context.Context, client kubernetes.Interface, subject string) (*certificatesv1.CertificateSigningRequest, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: subject, Organization: []string{"system:nodes"}}}, key)
	if err != nil {
		return nil, err
	}
	return client.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "node-test-replay-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}, metav1.CreateOptions{})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
