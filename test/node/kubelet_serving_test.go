package node

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"
	"github.com/osm-apiserver/osm-apiserver/test/node/egress"
	"github.com/osm-apiserver/osm-apiserver/test/node/nodevm"
)

// pauseStartLine is what test/node/images/pause prints when it starts.
const pauseStartLine = "pause: holding the pod's namespaces"

const servingTimeout = 5 * time.Minute

// checkKubeletServing proves the kubelet serves kube-apiserver's logs and exec
// with the certificate a cluster's approver lets it have, and returns the IP
// families of its SANs:
//   - before approval `kubectl logs` fails: kube-apiserver verifies the
//     kubelet's serving cert against the cluster CA (--kubelet-certificate-authority)
//     and the kubelet has none (serverTLSBootstrap);
//   - the node's pending kubernetes.io/kubelet-serving CSR passes what an
//     approver checks, its IP SANs are of the MD's families, and the test
//     approves it;
//   - kube-controller-manager signs it and the kubelet serves that certificate
//     at each of the Node's InternalIPs (through the egress proxy);
//   - `kubectl logs` shows the pause pod's start line and `kubectl exec -- /pause
//     hostname` answers the pod's name, through kube-apiserver, its egress
//     proxy and the VM's kubelet.
func checkKubeletServing(ctx context.Context, vm *nodevm.VM, b boot) (string, error) {
	pod := "pause-" + b.name
	out, err := kubectl(ctx, "logs", pod)
	if err == nil {
		return "", fmt.Errorf("kubectl logs %s worked before the kubelet's serving CSR was approved: %s", pod, out)
	}
	progress("%s: before the serving CSR is approved, as it must: %v", b.name, err)
	csr, err := waitServingCSR(ctx, vm, b)
	if err != nil {
		return "", err
	}
	n, err := env.kube.CoreV1().Nodes().Get(ctx, b.node, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	ips, err := reviewServingCSR(csr, n)
	if err != nil {
		return "", fmt.Errorf("serving CSR %s of node %s would not be approved: %w", csr.Name, b.node, err)
	}
	// The review compares the SANs with the Node's addresses; that the Node
	// has both families is joinNode's check. This says it of the CSR itself.
	fams := families(ips)
	if fams != b.ipFamily {
		return "", fmt.Errorf("serving CSR %s of node %s has IP SANs %v (%s), want %s", csr.Name, b.node, ips, fams, b.ipFamily)
	}
	progress("%s: serving CSR %s reviewed: IP SANs %v, the Node's addresses %v", b.name, csr.Name, ips, nodeAddresses(n, corev1.NodeInternalIP, corev1.NodeExternalIP, corev1.NodeHostName))
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type:    certificatesv1.CertificateApproved,
		Status:  corev1.ConditionTrue,
		Reason:  "NodeTestServingApprover",
		Message: "signer, requestor, subject, usages and SANs match Node " + b.node,
	})
	if _, err := env.kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		return "", fmt.Errorf("approving serving CSR %s: %w", csr.Name, err)
	}
	start := time.Now()
	issued, err := waitServing(ctx, vm, b, csr.Name)
	if err != nil {
		return "", err
	}
	progress("%s: serving CSR %s approved; the kubelet serves its certificate (%s) after %d s",
		b.name, csr.Name, issued.Subject.CommonName, int(time.Since(start).Seconds()))
	// kube-apiserver may still hold a failed connection; give it a few tries.
	var logs, host string
	err = waitFor(ctx, "kubectl logs and exec on pod "+pod, time.Minute, func() (string, error) {
		if logs, err = kubectl(ctx, "logs", pod); err != nil {
			return "kubectl logs: " + err.Error(), nil
		}
		if host, err = kubectl(ctx, "exec", pod, "--", "/pause", "hostname"); err != nil {
			return "kubectl exec: " + err.Error(), nil
		}
		return "", nil
	})
	if err != nil {
		return "", err
	}
	if !strings.Contains(logs, pauseStartLine) {
		return "", fmt.Errorf("kubectl logs %s: want %q, got %q", pod, pauseStartLine, logs)
	}
	if strings.TrimSpace(host) != pod {
		return "", fmt.Errorf("kubectl exec %s -- /pause hostname: want %q, got %q", pod, pod, host)
	}
	return fams, nil
}

// waitServingCSR waits for the node's pending kubelet serving CSR.
func waitServingCSR(ctx context.Context, vm *nodevm.VM, b boot) (*certificatesv1.CertificateSigningRequest, error) {
	var csr *certificatesv1.CertificateSigningRequest
	err := waitFor(ctx, "the kubelet serving CSR of "+b.node, servingTimeout, func() (string, error) {
		if done, err := vm.Exited(); done {
			return "", err
		}
		list, err := env.kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error(), nil
		}
		for i := range list.Items {
			c := &list.Items[i]
			if c.Spec.SignerName != certificatesv1.KubeletServingSignerName || c.Spec.Username != "system:node:"+b.node || len(c.Status.Conditions) > 0 {
				continue
			}
			if csr == nil || c.CreationTimestamp.After(csr.CreationTimestamp.Time) {
				csr = c
			}
		}
		if csr == nil {
			return "no pending " + certificatesv1.KubeletServingSignerName + " CSR from system:node:" + b.node, nil
		}
		return "", nil
	})
	return csr, err
}

// reviewServingCSR checks what an approver of kubelet serving certificates
// checks before it approves (e.g. kubelet-csr-approver, or an operator
// following the kubelet TLS bootstrap docs): the signer; that the node itself
// asks (system:node:<name> in system:nodes); the subject the signer requires;
// server-auth usages only; and SANs that are exactly the Node's addresses —
// DNS names for its Hostname/DNS addresses, IPs for its IPs — and nothing else.
// It returns the request's IP SANs.
func reviewServingCSR(csr *certificatesv1.CertificateSigningRequest, n *corev1.Node) ([]string, error) {
	user := "system:node:" + n.Name
	if csr.Spec.SignerName != certificatesv1.KubeletServingSignerName {
		return nil, fmt.Errorf("signer %s, want %s", csr.Spec.SignerName, certificatesv1.KubeletServingSignerName)
	}
	if csr.Spec.Username != user || !slices.Contains(csr.Spec.Groups, "system:nodes") {
		return nil, fmt.Errorf("requested by %s (groups %v), want %s in system:nodes", csr.Spec.Username, csr.Spec.Groups, user)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("spec.request is not a PEM certificate request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, err
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("request signature: %w", err)
	}
	if req.Subject.CommonName != user || !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return nil, fmt.Errorf("subject CN=%s O=%v, want CN=%s O=[system:nodes]", req.Subject.CommonName, req.Subject.Organization, user)
	}
	var usages []string
	for _, u := range csr.Spec.Usages {
		usages = append(usages, string(u))
	}
	allowed := []string{string(certificatesv1.UsageDigitalSignature), string(certificatesv1.UsageKeyEncipherment), string(certificatesv1.UsageServerAuth)}
	for _, u := range usages {
		if !slices.Contains(allowed, u) {
			return nil, fmt.Errorf("usage %q, want only %v", u, allowed)
		}
	}
	if !slices.Contains(usages, string(certificatesv1.UsageServerAuth)) || !slices.Contains(usages, string(certificatesv1.UsageDigitalSignature)) {
		return nil, fmt.Errorf("usages %v lack server auth or digital signature", usages)
	}
	if len(req.EmailAddresses) > 0 || len(req.URIs) > 0 {
		return nil, fmt.Errorf("e-mail or URI SANs %v %v", req.EmailAddresses, req.URIs)
	}
	wantDNS := sorted(nodeAddresses(n, corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeExternalDNS))
	wantIPs := sorted(nodeAddresses(n, corev1.NodeInternalIP, corev1.NodeExternalIP))
	var gotIPs []string
	for _, ip := range req.IPAddresses {
		gotIPs = append(gotIPs, ip.String())
	}
	if got := sorted(req.DNSNames); !slices.Equal(got, wantDNS) {
		return nil, fmt.Errorf("DNS SANs %v, the Node's names are %v", got, wantDNS)
	}
	if got := sorted(gotIPs); !slices.Equal(got, wantIPs) {
		return nil, fmt.Errorf("IP SANs %v, the Node's addresses are %v", got, wantIPs)
	}
	if len(wantDNS)+len(wantIPs) == 0 {
		return nil, errors.New("the Node has no addresses")
	}
	return gotIPs, nil
}

// sorted returns s sorted and without duplicates.
func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return slices.Compact(s)
}

// waitServing waits until the CSR is issued, the certificate chains to the
// cluster CA (kube-controller-manager's signer) for each of the Node's
// InternalIPs, and the kubelet presents exactly it at each of them, reached as
// kube-apiserver reaches it: a CONNECT to that address through the egress proxy.
func waitServing(ctx context.Context, vm *nodevm.VM, b boot, name string) (*x509.Certificate, error) {
	caPEM, err := os.ReadFile(filepath.Join(env.dir, "pki", "ca.crt"))
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no CA certificate in the cluster's pki/ca.crt")
	}
	var issued *x509.Certificate
	err = waitFor(ctx, "the kubelet of "+b.node+" to serve its approved certificate", servingTimeout, func() (string, error) {
		if done, err := vm.Exited(); done {
			return "", err
		}
		if issued == nil {
			csr, err := env.kube.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err.Error(), nil
			}
			block, _ := pem.Decode(csr.Status.Certificate)
			if block == nil {
				return "CSR " + name + " approved, not issued yet", nil
			}
			if issued, err = x509.ParseCertificate(block.Bytes); err != nil {
				return "", fmt.Errorf("CSR %s: %w", name, err)
			}
			n, err := env.kube.CoreV1().Nodes().Get(ctx, b.node, metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			for _, ip := range nodeAddresses(n, corev1.NodeInternalIP) {
				if err := issued.VerifyHostname(ip); err != nil {
					return "", fmt.Errorf("certificate of CSR %s: %w", name, err)
				}
			}
			if _, err := issued.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				return "", fmt.Errorf("certificate of CSR %s: %w", name, err)
			}
		}
		n, err := env.kube.CoreV1().Nodes().Get(ctx, b.node, metav1.GetOptions{})
		if err != nil {
			return err.Error(), nil
		}
		for _, ip := range nodeAddresses(n, corev1.NodeInternalIP) {
			served, err := servedCertificate(ctx, ip)
			if err != nil {
				return "the kubelet's TLS at " + ip + ": " + err.Error(), nil
			}
			if !bytes.Equal(served.Raw, issued.Raw) {
				return fmt.Sprintf("the kubelet at %s serves a certificate issued %s by %s, not CSR %s's", ip, served.NotBefore.Format(time.RFC3339), served.Issuer.CommonName, name), nil
			}
		}
		return "", nil
	})
	return issued, err
}

// servedCertificate is the leaf the kubelet presents at ip, reached through
// the egress proxy as kube-apiserver reaches it. The caller compares it with
// the issued one.
func servedCertificate(ctx context.Context, ip string) (*x509.Certificate, error) {
	raw, err := egress.Dial("unix", egressSocket, egress.Target(ip))
	if err != nil {
		return nil, err
	}
	c := tls.Client(raw, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // compared with the issued certificate
	defer func() { _ = c.Close() }()
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.HandshakeContext(hctx); err != nil {
		return nil, err
	}
	certs := c.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return nil, errors.New("no certificate")
	}
	return certs[0], nil
}

// kubectl runs the cluster's kubectl in the test namespace and returns its
// standard output; an error carries its standard error.
func kubectl(ctx context.Context, args ...string) (string, error) {
	vars, err := testenv.ReadShellEnv(filepath.Join(env.dir, "env"))
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, vars["KUBECTL"], append([]string{"--kubeconfig", vars["KUBECONFIG"], "-n", testNamespace}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+filepath.Join(env.dir, "kube-cache"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
