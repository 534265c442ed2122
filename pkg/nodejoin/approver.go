package nodejoin

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
)

// Reasons of the conditions the approver sets on CSRs of join identities.
const (
	// ReasonApproved: the CSR asks for the client certificate of the node
	// of the join identity's machine.
	ReasonApproved = "OSMMachineJoin"
	// ReasonForeignNodeName: the CSR asks for another name.
	ReasonForeignNodeName = "OSMForeignNodeName"
	// ReasonNotJoining: the identity is no join identity, its machine is
	// gone or has joined already.
	ReasonNotJoining = "OSMNotJoining"
	// ReasonInvalid: the CSR is not a kubelet client certificate request.
	ReasonInvalid = "OSMInvalidRequest"
	// ReasonCertificateIssued: another client CSR of the join identity was
	// approved already. A kubelet needs one certificate; every further one
	// would outlive the join credential's revocation.
	ReasonCertificateIssued = "OSMCertificateIssued"
)

const nodeUserPrefix = "system:node:"

// syncCSR approves or denies the kubelet client CSR name of a join
// identity. kube-controller-manager's approver leaves it alone (no cluster
// binds node-client auto-approval to the join identities' group) and signs it
// once approved.
func (c *Controller) syncCSR(ctx context.Context, name string) (time.Duration, error) {
	csr, err := c.csrLister().Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil || decided(csr) {
		return 0, err
	}
	account, ok := AccountOf(csr.Spec.Username)
	if !ok {
		return 0, nil
	}
	approve, reason, message, err := c.decide(ctx, csr, account)
	if err != nil {
		return 0, err
	}
	condition := certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue,
		Reason: reason, Message: message, LastUpdateTime: metav1.Now(),
	}
	verb, decision := "deny", "denied"
	if approve {
		condition.Type, verb, decision = certificatesv1.CertificateApproved, "approve", "approved"
	}
	updated := csr.DeepCopy()
	updated.Status.Conditions = append(updated.Status.Conditions, condition)
	_, err = c.cfg.Client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("failed to %s CSR %s: %w", verb, csr.Name, err)
	}
	metrics.JoinCSRs.WithLabelValues(decision).Inc()
	klog.FromContext(ctx).Info("Decided the client CSR of a join identity", "csr", csr.Name, "decision", decision, "reason", reason, "message", message)
	return 0, nil
}

// decide says whether csr of join identity account asks for the client
// certificate of its machine's node, and why (not).
func (c *Controller) decide(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, account string) (approve bool, reason, message string, err error) {
	sa, err := c.accountLister().ServiceAccounts(Namespace).Get(account)
	if apierrors.IsNotFound(err) {
		// The cache may be behind the identity that made the CSR.
		sa, err = c.cfg.Client.CoreV1().ServiceAccounts(Namespace).Get(ctx, account, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return false, ReasonNotJoining, fmt.Sprintf("osm-apiserver: %s is no join identity of a machine (it is gone)", csr.Spec.Username), nil
	}
	if err != nil {
		return false, "", "", err
	}
	rec, ok := ParseRecord(sa)
	if !ok || string(sa.UID) != csr.Spec.UID {
		return false, ReasonNotJoining, fmt.Sprintf("osm-apiserver: %s is no join identity of a machine, or not the one it was", csr.Spec.Username), nil
	}
	m, err := c.cfg.Machines.Get(rec.Machine.Namespace, rec.Machine.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return false, "", "", err
	}
	if err != nil || m.UID != rec.MachineUID {
		return false, ReasonNotJoining, fmt.Sprintf("osm-apiserver: machine %s of join identity %s is gone", rec.Machine, sa.Name), nil
	}
	if node, joined := c.cfg.Machines.NodeOf(m); joined {
		return false, ReasonNotJoining, fmt.Sprintf("osm-apiserver: machine %s has joined as node %s already", rec.Machine, node), nil
	}
	names := machinecontroller.NodeNames(m)
	want := nodeUserPrefix + strings.Join(names, " or "+nodeUserPrefix)
	subject, err := kubeletClientSubject(csr)
	if err != nil {
		return false, ReasonInvalid, fmt.Sprintf("osm-apiserver: the join identity of machine %s may ask only for the client certificate of %s: %v", rec.Machine, want, err), nil
	}
	if name, _ := strings.CutPrefix(subject, nodeUserPrefix); !slices.Contains(names, name) {
		return false, ReasonForeignNodeName, fmt.Sprintf("osm-apiserver: the join identity of machine %s may ask only for the client certificate of its own node, %s, not of %s",
			rec.Machine, want, subject), nil
	}
	return c.claimCertificate(ctx, sa, csr, rec, subject)
}

// claimCertificate approves csr as the one client certificate of join
// identity sa, recording it on the identity first, unless another CSR was
// recorded: the record holds across replicas, leaders and restarts, and the
// write fails on a concurrent one (the CSR is then decided again).
func (c *Controller) claimCertificate(ctx context.Context, sa *corev1.ServiceAccount, csr *certificatesv1.CertificateSigningRequest,
	rec Record, subject string) (approve bool, reason, message string, err error) {
	accounts := c.cfg.Client.CoreV1().ServiceAccounts(Namespace)
	// The cache may be behind a record written a moment ago.
	fresh, err := accounts.Get(ctx, sa.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || err == nil && fresh.UID != sa.UID {
		return false, ReasonNotJoining, fmt.Sprintf("osm-apiserver: %s is no join identity of a machine, or not the one it was", csr.Spec.Username), nil
	}
	if err != nil {
		return false, "", "", err
	}
	this := csr.Name + "/" + string(csr.UID)
	switch recorded := fresh.Annotations[annotationApprovedCSR]; recorded {
	case this:
		// Recorded by an earlier attempt whose approval did not go through.
	case "":
		fresh = fresh.DeepCopy()
		if fresh.Annotations == nil {
			fresh.Annotations = map[string]string{}
		}
		fresh.Annotations[annotationApprovedCSR] = this
		if _, err := accounts.Update(ctx, fresh, metav1.UpdateOptions{}); err != nil {
			return false, "", "", fmt.Errorf("failed to record CSR %s on join identity %s/%s: %w", csr.Name, Namespace, sa.Name, err)
		}
	default:
		name, _, _ := strings.Cut(recorded, "/")
		return false, ReasonCertificateIssued, fmt.Sprintf("osm-apiserver: the join identity of machine %s was approved its one client certificate already (CSR %s); a join gets one",
			rec.Machine, name), nil
	}
	return true, ReasonApproved, fmt.Sprintf("osm-apiserver: the join identity of machine %s asks for the client certificate of its own node, %s", rec.Machine, subject), nil
}

// kubeletClientSubject returns the common name a kubelet client CSR asks
// for, after checking it is one: organization system:nodes only, no subject
// alternative names, client usages only.
func kubeletClientSubject(csr *certificatesv1.CertificateSigningRequest) (string, error) {
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return "", fmt.Errorf("the request is no PEM certificate request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("the request does not parse: %w", err)
	}
	cn := req.Subject.CommonName
	switch {
	case !strings.HasPrefix(cn, nodeUserPrefix):
		return "", fmt.Errorf("it asks for %q", cn)
	case !slices.Equal(req.Subject.Organization, []string{"system:nodes"}):
		return "", fmt.Errorf("it asks for the organizations %v, not system:nodes alone", req.Subject.Organization)
	case len(req.DNSNames)+len(req.IPAddresses)+len(req.EmailAddresses)+len(req.URIs) > 0:
		return "", fmt.Errorf("it asks for subject alternative names")
	}
	for _, u := range csr.Spec.Usages {
		if u != certificatesv1.UsageDigitalSignature && u != certificatesv1.UsageKeyEncipherment && u != certificatesv1.UsageClientAuth {
			return "", fmt.Errorf("it asks for the usage %q", u)
		}
	}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		return "", fmt.Errorf("it does not ask for client auth")
	}
	return cn, nil
}

// decided says whether csr is approved or denied (or failed) already.
func decided(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied || c.Type == certificatesv1.CertificateFailed {
			return true
		}
	}
	return false
}
