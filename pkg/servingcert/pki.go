package servingcert

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The Secret's data keys. tls.crt and tls.key make it a kubernetes.io/tls
// Secret; ca-bundle.crt is what the APIService's caBundle holds.
const (
	CertKey       = corev1.TLSCertKey
	KeyKey        = corev1.TLSPrivateKeyKey
	CAKey         = "ca.crt"
	CAKeyKey      = "ca.key"
	NextCAKey     = "ca-next.crt"
	NextCAKeyKey  = "ca-next.key"
	PreviousCAKey = "ca-previous.crt"
	BundleKey     = "ca-bundle.crt"
)

// Validity is how long new certificates are valid.
type Validity struct {
	// CA is the lifetime of a CA, Cert of a serving certificate (never past
	// its CA's expiry).
	CA, Cert time.Duration
}

// DefaultValidity: a serving certificate is renewed after 60 days, a CA
// after 16 months.
var DefaultValidity = Validity{CA: 2 * 365 * 24 * time.Hour, Cert: 90 * 24 * time.Hour}

// Result is what Plan decided.
type Result struct {
	// Data is what the Secret should hold.
	Data map[string][]byte
	// Changes say why Data differs from the Secret's data; none if it does not.
	Changes []string
	// Next is when Plan has something to do again, unless the Secret changes.
	Next time.Time
	// CertExpiry and CAExpiry are when the serving certificate and the CA
	// that signed it expire.
	CertExpiry, CAExpiry time.Time
}

// Plan returns what a Secret holding data should hold at now for a serving
// certificate valid for names: data itself when nothing is due. An empty data
// gets a new CA and certificate. A CA that is unusable but still valid (its
// key missing or not its own) is an error: Plan never replaces a CA that
// kube-apiserver may trust; one that does not parse or has expired is
// replaced, and Changes says so.
func Plan(data map[string][]byte, names []string, v Validity, now time.Time) (*Result, error) {
	r := &Result{Data: maps.Clone(data)}
	if r.Data == nil {
		r.Data = map[string][]byte{}
	}
	ca, next, err := currentCAs(r, now)
	if err != nil {
		return nil, err
	}
	if ca == nil {
		if ca, err = newCA(now, v.CA); err != nil {
			return nil, err
		}
		if len(data) == 0 {
			r.change("new CA")
		}
		r.set(CAKey, ca.certPEM)
		r.set(CAKeyKey, ca.keyPEM)
	}
	previous := parseCert(r.Data[PreviousCAKey])
	if _, ok := r.Data[PreviousCAKey]; ok && (previous == nil || !now.Before(previous.NotAfter)) {
		delete(r.Data, PreviousCAKey)
		previous = nil
		r.change("previous CA removed from the bundle: expired or unreadable")
	}

	switch {
	case next == nil && !now.Before(renewAt(ca.cert)):
		if next, err = newCA(now, v.CA); err != nil {
			return nil, err
		}
		r.set(NextCAKey, next.certPEM)
		r.set(NextCAKeyKey, next.keyPEM)
		r.change(fmt.Sprintf("next CA added to the bundle: the CA expires at %s", ca.cert.NotAfter.UTC().Format(time.RFC3339)))
	case next != nil && !now.Before(switchAt(ca.cert, next.cert)):
		r.set(PreviousCAKey, ca.certPEM)
		previous, ca, next = ca.cert, next, nil
		r.set(CAKey, ca.certPEM)
		r.set(CAKeyKey, ca.keyPEM)
		delete(r.Data, NextCAKey)
		delete(r.Data, NextCAKeyKey)
		r.change("serving certificate moves to the next CA, now the CA")
	}

	leaf, why := usableLeaf(r.Data, ca.cert, names, now)
	if leaf == nil {
		if leaf, err = newLeaf(ca, names, now, v.Cert); err != nil {
			return nil, err
		}
		r.set(CertKey, leaf.certPEM)
		r.set(KeyKey, leaf.keyPEM)
		r.change("new serving certificate: " + why)
	}

	bundle := slices.Concat(ca.certPEM, pemOf(next), encodeCertOrNil(previous))
	if !bytes.Equal(r.Data[BundleKey], bundle) {
		r.Data[BundleKey] = bundle
		r.change("CA bundle updated")
	}

	r.CertExpiry, r.CAExpiry = leaf.cert.NotAfter, ca.cert.NotAfter
	r.Next = renewAt(leaf.cert)
	if next == nil {
		r.Next = earliest(r.Next, renewAt(ca.cert))
	} else {
		r.Next = earliest(r.Next, switchAt(ca.cert, next.cert))
	}
	if previous != nil {
		r.Next = earliest(r.Next, previous.NotAfter)
	}
	return r, nil
}

// currentCAs parses the CA and the next CA of r.Data. The CA is nil when a
// new one is due: none, one that does not parse, or one that expired (then
// a valid next CA takes its place). A next CA that is unusable is dropped: it
// signed nothing yet.
func currentCAs(r *Result, now time.Time) (ca, next *pair, err error) {
	if _, ok := r.Data[NextCAKey]; ok {
		next, err = parsePair(r.Data[NextCAKey], r.Data[NextCAKeyKey], true)
		if err != nil || !now.Before(next.cert.NotAfter) {
			next = nil
			delete(r.Data, NextCAKey)
			delete(r.Data, NextCAKeyKey)
			r.change("next CA dropped: unusable or expired")
		}
	}
	if len(r.Data) == 0 {
		return nil, nil, nil
	}
	ca, err = parsePair(r.Data[CAKey], r.Data[CAKeyKey], true)
	var why string
	switch {
	case err != nil:
		if c := parseCert(r.Data[CAKey]); c != nil && c.IsCA && now.Before(c.NotAfter) {
			return nil, nil, fmt.Errorf("%s holds a CA valid until %s, but %w; delete the Secret to start over with a new CA",
				CAKey, c.NotAfter.UTC().Format(time.RFC3339), err)
		}
		why = fmt.Sprintf("the CA is unusable: %v", err)
	case !now.Before(ca.cert.NotAfter):
		why = "the CA expired"
	default:
		return ca, next, nil
	}
	if next == nil {
		r.change("new CA: " + why)
		return nil, nil, nil
	}
	delete(r.Data, NextCAKey)
	delete(r.Data, NextCAKeyKey)
	r.set(CAKey, next.certPEM)
	r.set(CAKeyKey, next.keyPEM)
	r.change(why + ": the next CA is the CA")
	return next, nil, nil
}

// usableLeaf is the serving certificate of data if it can still be served
// at now for names, signed by ca; else nil and why not.
func usableLeaf(data map[string][]byte, ca *x509.Certificate, names []string, now time.Time) (*pair, string) {
	leaf, err := parsePair(data[CertKey], data[KeyKey], false)
	switch {
	case len(data[CertKey]) == 0:
		return nil, "none"
	case err != nil:
		return nil, err.Error()
	case leaf.cert.CheckSignatureFrom(ca) != nil:
		return nil, "not signed by the CA"
	case !slices.Equal(slices.Sorted(slices.Values(leaf.cert.DNSNames)), slices.Sorted(slices.Values(names))):
		return nil, "other names"
	case !now.Before(renewAt(leaf.cert)):
		return nil, fmt.Sprintf("renewal due, expires at %s", leaf.cert.NotAfter.UTC().Format(time.RFC3339))
	}
	return leaf, ""
}

// renewAt is when c is renewed: at 2/3 of its lifetime.
func renewAt(c *x509.Certificate) time.Time {
	return c.NotBefore.Add(c.NotAfter.Sub(c.NotBefore) * 2 / 3)
}

// switchAt is when the serving certificate moves from ca to next: half way
// between next's start and ca's expiry, so that the bundle has held next for
// as long as the old certificate may still be served after the move.
func switchAt(ca, next *x509.Certificate) time.Time {
	return next.NotBefore.Add(ca.NotAfter.Sub(next.NotBefore) / 2)
}

// backdate is how far a new certificate's NotBefore lies in the past, for
// clocks a little behind ours.
func backdate(validity time.Duration) time.Duration {
	return min(time.Minute, validity/10)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func (r *Result) set(key string, value []byte) { r.Data[key] = value }

func (r *Result) change(why string) { r.Changes = append(r.Changes, why) }

// pair is a certificate and its private key, parsed and in PEM.
type pair struct {
	cert            *x509.Certificate
	key             crypto.Signer
	certPEM, keyPEM []byte
}

func pemOf(p *pair) []byte {
	if p == nil {
		return nil
	}
	return p.certPEM
}

// parsePair parses a PEM certificate and the PEM private key that matches it;
// isCA says which kind of certificate it must be. Errors name what is wrong,
// never the key's bytes.
func parsePair(certPEM, keyPEM []byte, isCA bool) (*pair, error) {
	cert := parseCert(certPEM)
	if cert == nil {
		return nil, errors.New("no PEM certificate")
	}
	if cert.IsCA != isCA {
		return nil, fmt.Errorf("the certificate's IsCA is %t", cert.IsCA)
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, errors.New("its key is not PEM")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		if key, err = x509.ParseECPrivateKey(block.Bytes); err != nil {
			return nil, errors.New("its key does not parse")
		}
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("its key cannot sign")
	}
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(cert.PublicKey) {
		return nil, errors.New("its key is not the certificate's")
	}
	return &pair{cert: cert, key: signer, certPEM: slices.Clone(certPEM), keyPEM: slices.Clone(keyPEM)}, nil
}

// parseCert is the first certificate of PEM data, or nil.
func parseCert(data []byte) *x509.Certificate {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil
	}
	return c
}

func encodeCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func encodeCertOrNil(c *x509.Certificate) []byte {
	if c == nil {
		return nil
	}
	return encodeCert(c)
}

// newCA returns a new self-signed CA valid for validity from now.
func newCA(now time.Time, validity time.Duration) (*pair, error) {
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("osm-apiserver-ca@%d", now.Unix())},
		NotBefore:             now.Add(-backdate(validity)),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	return issue(tmpl, nil)
}

// newLeaf returns a new serving certificate for names signed by ca, valid
// for validity from now but not past ca's expiry.
func newLeaf(ca *pair, names []string, now time.Time, validity time.Duration) (*pair, error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: names[0]},
		DNSNames:    slices.Clone(names),
		NotBefore:   now.Add(-backdate(validity)),
		NotAfter:    earliest(now.Add(validity), ca.cert.NotAfter),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	return issue(tmpl, ca)
}

// issue makes a new ECDSA P-256 key and a certificate of tmpl for it, signed
// by parent (self-signed if nil).
func issue(tmpl *x509.Certificate, parent *pair) (*pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("failed to generate a key: %w", err)
	}
	if tmpl.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)); err != nil {
		return nil, fmt.Errorf("failed to generate a serial number: %w", err)
	}
	signerCert, signerKey := tmpl, crypto.Signer(key)
	if parent != nil {
		signerCert, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, key.Public(), signerKey)
	if err != nil {
		return nil, fmt.Errorf("failed to sign a certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &pair{
		cert: cert, key: key,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}
