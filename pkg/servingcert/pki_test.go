package servingcert

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"
)

var (
	testNames    = ServiceNames("kube-system", "osm-apiserver")
	testValidity = Validity{CA: 30 * time.Hour, Cert: 3 * time.Hour}
	t0           = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

func plan(t *testing.T, data map[string][]byte, now time.Time) *Result {
	t.Helper()
	r, err := Plan(data, testNames, testValidity, now)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// verify says whether the serving certificate of data chains to a CA of
// bundle for the Service's name at now, as kube-apiserver checks it.
func verify(data map[string][]byte, bundle []byte, now time.Time) error {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(bundle) {
		return errTest("empty bundle")
	}
	leaf := parseCert(data[CertKey])
	if leaf == nil {
		return errTest("no certificate")
	}
	_, err := leaf.Verify(x509.VerifyOptions{DNSName: "osm-apiserver.kube-system.svc", Roots: roots, CurrentTime: now})
	return err
}

type errTest string

func (e errTest) Error() string { return string(e) }

func TestPlanCreatesAndKeeps(t *testing.T) {
	r := plan(t, nil, t0)
	if len(r.Changes) == 0 {
		t.Fatal("no changes for an empty Secret")
	}
	for _, k := range []string{CertKey, KeyKey, CAKey, CAKeyKey, BundleKey} {
		if len(r.Data[k]) == 0 {
			t.Errorf("no %s", k)
		}
	}
	if err := verify(r.Data, r.Data[BundleKey], t0); err != nil {
		t.Errorf("the certificate does not verify against the bundle: %v", err)
	}
	if !r.CertExpiry.Equal(t0.Add(testValidity.Cert)) || !r.CAExpiry.Equal(t0.Add(testValidity.CA)) {
		t.Errorf("expiries %s, %s", r.CertExpiry, r.CAExpiry)
	}
	if want := t0.Add(testValidity.Cert * 2 / 3); r.Next.Sub(want).Abs() > 2*time.Minute {
		t.Errorf("next check at %s, want about %s (2/3 of the certificate's lifetime)", r.Next, want)
	}
	// Until then, nothing changes.
	again := plan(t, r.Data, r.Next.Add(-time.Second))
	if len(again.Changes) != 0 {
		t.Errorf("changes before renewal is due: %v", again.Changes)
	}
	// Then only the serving certificate does.
	renewed := plan(t, r.Data, r.Next)
	if bytes.Equal(renewed.Data[CertKey], r.Data[CertKey]) || bytes.Equal(renewed.Data[KeyKey], r.Data[KeyKey]) {
		t.Error("serving certificate not renewed at 2/3 of its lifetime")
	}
	for _, k := range []string{CAKey, CAKeyKey, BundleKey} {
		if !bytes.Equal(renewed.Data[k], r.Data[k]) {
			t.Errorf("%s changed with the serving certificate", k)
		}
	}
}

// Through several CA lifetimes, every serving certificate verifies against
// the bundle published before it was made: kube-apiserver trusts a new CA
// before any certificate it signed is served.
func TestPlanRotatesWithOverlap(t *testing.T) {
	r := plan(t, nil, t0)
	now := t0
	cas := map[string]bool{string(r.Data[CAKey]): true}
	published := map[string]time.Time{} // CA -> when a bundle first held it
	for step := 0; now.Before(t0.Add(4 * testValidity.CA)); step++ {
		if step > 200 {
			t.Fatal("too many steps")
		}
		previous := r
		now = r.Next
		r = plan(t, previous.Data, now)
		if len(r.Changes) == 0 {
			t.Fatalf("%s: nothing to do at Next", now)
		}
		if err := verify(r.Data, r.Data[BundleKey], now); err != nil {
			t.Fatalf("%s: %v", now, err)
		}
		if !bytes.Equal(r.Data[CertKey], previous.Data[CertKey]) {
			if err := verify(r.Data, previous.Data[BundleKey], now); err != nil {
				t.Fatalf("%s (%v): the new certificate does not verify against the bundle published before: %v", now, r.Changes, err)
			}
		}
		if now.Sub(previous.CAExpiry) > 0 {
			t.Fatalf("%s: the served CA expired at %s", now, previous.CAExpiry)
		}
		cas[string(r.Data[CAKey])] = true
		for _, ca := range bundleCerts(t, previous.Data[BundleKey]) {
			if _, ok := published[string(ca.Raw)]; !ok {
				published[string(ca.Raw)] = previous.Next
			}
		}
		if issuer := parseCert(r.Data[CAKey]); issuer != nil && !bytes.Equal(r.Data[CAKey], previous.Data[CAKey]) {
			if since, ok := published[string(issuer.Raw)]; !ok || now.Sub(since) < testValidity.CA/10 {
				t.Fatalf("%s: serving from a CA published %s before", now, now.Sub(since))
			}
		}
		if n := strings.Count(string(r.Data[BundleKey]), "BEGIN CERTIFICATE"); n > 2 {
			t.Fatalf("%s: %d CAs in the bundle", now, n)
		}
	}
	if len(cas) < 4 {
		t.Errorf("%d CAs in 4 CA lifetimes", len(cas))
	}
}

func TestPlanRepairs(t *testing.T) {
	good := plan(t, nil, t0).Data
	with := func(k string, v []byte) map[string][]byte {
		d := map[string][]byte{}
		for kk, vv := range good {
			d[kk] = vv
		}
		if v == nil {
			delete(d, k)
		} else {
			d[k] = v
		}
		return d
	}
	other := plan(t, nil, t0).Data

	for _, tc := range []struct {
		name    string
		data    map[string][]byte
		now     time.Time
		keepsCA bool
		change  string
	}{
		{"broken serving certificate", with(CertKey, []byte("garbage")), t0, true, "new serving certificate: no PEM certificate"},
		{"serving key of another certificate", with(KeyKey, other[KeyKey]), t0, true, "new serving certificate: its key is not the certificate's"},
		{"serving certificate of another CA", with(CertKey, other[CertKey]), t0, true, "new serving certificate"},
		{"other names", plan2(t, good, []string{"osm-apiserver.other.svc"}), t0, true, "new serving certificate: other names"},
		{"lost bundle", with(BundleKey, nil), t0, true, "CA bundle updated"},
		{"CA that does not parse", with(CAKey, []byte("garbage")), t0, false, "new CA: the CA is unusable: no PEM certificate"},
		{"expired CA", good, t0.Add(testValidity.CA), false, "new CA: the CA expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := plan(t, tc.data, tc.now)
			if !strings.Contains(strings.Join(r.Changes, "; "), tc.change) {
				t.Errorf("changes %q, want one with %q", r.Changes, tc.change)
			}
			if got := bytes.Equal(r.Data[CAKey], good[CAKey]); got != tc.keepsCA {
				t.Errorf("kept the CA: %t, want %t", got, tc.keepsCA)
			}
			if err := verify(r.Data, r.Data[BundleKey], tc.now); err != nil {
				t.Error(err)
			}
		})
	}
}

func plan2(t *testing.T, data map[string][]byte, names []string) map[string][]byte {
	t.Helper()
	r, err := Plan(data, names, testValidity, t0)
	if err != nil {
		t.Fatal(err)
	}
	return r.Data
}

// A CA that kube-apiserver may trust is never replaced behind the
// operator's back: a still-valid CA whose key is lost is an error.
func TestPlanKeepsAValidCAItCannotUse(t *testing.T) {
	good := plan(t, nil, t0).Data
	other := plan(t, nil, t0).Data
	for name, key := range map[string][]byte{"no key": nil, "another CA's key": other[CAKeyKey], "not PEM": []byte("x")} {
		t.Run(name, func(t *testing.T) {
			data := map[string][]byte{CAKey: good[CAKey], CertKey: good[CertKey], KeyKey: good[KeyKey]}
			if key != nil {
				data[CAKeyKey] = key
			}
			_, err := Plan(data, testNames, testValidity, t0)
			if err == nil || !strings.Contains(err.Error(), "ca.crt holds a CA valid until 2026-01-02T06:00:00Z, but") ||
				!strings.Contains(err.Error(), "delete the Secret to start over") {
				t.Fatalf("error %v", err)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Error("the error holds a key")
			}
		})
	}
}

func bundleCerts(t *testing.T, bundle []byte) []*x509.Certificate {
	t.Helper()
	var certs []*x509.Certificate
	for rest := bundle; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return certs
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		certs = append(certs, c)
	}
}
