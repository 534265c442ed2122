package image

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The validities the install test runs with: a serving certificate renewed
// every ~40 s, a CA rotated after ~2 min, so that one run sees both.
const (
	testCertValidity = "1m"
	testCAValidity   = "3m"
)

// TestInstallWithKubectlApply installs osm-apiserver as an operator would:
// artifacts/deploy rendered and applied as it is to a cluster without its
// CRDs (the kustomization brings them), nothing made by hand, the
// image's binary run with the Deployment's arguments and the ServiceAccount's
// RBAC and admission policies. The APIService becomes Available: the server
// made its certificate and set the caBundle, and kube-apiserver verifies the
// chain. It stays Available across serving certificate and CA rotations, a
// second replica serves the same Secret without writing it, and applying the
// manifests again leaves the caBundle alone.
//
// The cluster has no pod network, so two objects are adapted as
// hack/local-cluster.sh does it: the Service is an ExternalName for localhost,
// and the APIService's port the binary's.
func TestInstallWithKubectlApply(t *testing.T) {
	b := makeImage(t)
	objects := kustomize(t, filepath.Join(repo(), "artifacts", "deploy"))
	d := deployment(t, objects)
	c := d.Spec.Template.Spec.Containers[0]
	// A cluster without osm-apiserver's CRDs: artifacts/deploy brings them.
	cl := startCluster(t, "OSM_OSP_CRD=none", "OSM_OVERLAY_CRD=none")
	port := freePort(t)
	var docs []string
	crds := 0
	for _, o := range objects {
		switch {
		case o.GetKind() == "CustomResourceDefinition":
			crds++
		case o.GetKind() == "APIService":
			if _, ok, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "caBundle"); ok {
				t.Fatal("artifacts/deploy's APIService sets a caBundle: applying it again would undo the server's")
			}
			setPort(t, o.Object, port, "spec", "service", "port")
		case o.GetKind() == "Service" && o.GetName() == "osm-apiserver":
			o.Object["spec"] = map[string]any{"type": "ExternalName", "externalName": "localhost",
				"ports": []any{map[string]any{"name": "https", "port": int64(atoi(t, port)), "protocol": "TCP"}}}
		}
		docs = append(docs, toYAML(t, o))
	}
	manifest := filepath.Join(cl.dir, "install.yaml")
	if err := os.WriteFile(manifest, []byte(strings.Join(docs, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if crds != 2 {
		t.Fatalf("artifacts/deploy has %d CRDs, want osm-apiserver's 2 (artifacts/crd)", crds)
	}
	cl.kubectl(t, "apply", "-f", manifest) // what `kubectl apply -k` does
	cl.kubectl(t, "wait", "--for", "condition=Established", "--timeout", "60s",
		"crd/operatingsystemprofiles.operatingsystemmanager.k8c.io", "crd/operatingsystemprofileoverlays.overlays.osm.k8c.io")

	validity := []string{"--serving-cert-validity=" + testCertValidity, "--serving-ca-validity=" + testCAValidity}
	started := time.Now()
	first := startPod(t, b, d, c, cl, "osm-apiserver-0", port, validity...)
	if err := cl.available(t, first); err != nil {
		first.showLog()
		t.Fatal(err)
	}
	t.Logf("APIService Available %s after start", time.Since(started).Round(time.Millisecond))
	initial := cl.servingSecret(t)
	cl.checkCABundle(t, initial)

	// A second replica shares the Secret: it writes nothing (unless a
	// renewal fell due meanwhile) and serves its certificate.
	second := startPod(t, b, d, c, cl, "osm-apiserver-1", "", validity...)
	if err := probe("https://127.0.0.1:"+second.port+"/readyz", second.exited); err != nil {
		second.showLog()
		t.Fatal(err)
	}
	now := cl.servingSecret(t)
	if now.resourceVersion != initial.resourceVersion && time.Now().Before(renewAt(t, initial.data["tls.crt"])) {
		t.Errorf("the second replica rewrote the Secret (resourceVersion %s -> %s) before a renewal was due", initial.resourceVersion, now.resourceVersion)
	}

	// Applying the manifests again, client- or server-side, keeps the caBundle.
	// (Switching to server-side apply takes over what client-side apply set,
	// such as the admission policies' defaulted matchConstraints.)
	cl.kubectl(t, "apply", "-f", manifest)
	cl.checkCABundle(t, cl.servingSecret(t))
	cl.kubectl(t, "apply", "--server-side", "--force-conflicts", "-f", manifest)
	cl.checkCABundle(t, cl.servingSecret(t))

	// Rotations: kube-apiserver keeps reaching the group while the serving
	// certificate is renewed and the CA is replaced, until the first CA has
	// left the bundle.
	firstCA := string(initial.data["ca.crt"])
	var renewals, failures int
	var sawTwoCAs, sawCAGone bool
	lastCert := string(initial.data["tls.crt"])
	deadline := time.Now().Add(8 * time.Minute)
	for !sawCAGone {
		if time.Now().After(deadline) {
			first.showLog()
			t.Fatalf("the first CA did not leave the bundle within 8 minutes (%d renewals, two CAs seen: %t)", renewals, sawTwoCAs)
		}
		time.Sleep(2 * time.Second)
		if _, err := cl.kubectlErr("get", "--raw", "/apis/osm.k8c.io/v1alpha1"); err != nil {
			failures++
			t.Errorf("%s: kube-apiserver cannot reach osm-apiserver: %v", time.Now().UTC().Format(time.TimeOnly), err)
		}
		s := cl.servingSecret(t)
		if cert := string(s.data["tls.crt"]); cert != lastCert {
			renewals++
			lastCert = cert
		}
		n := bytes.Count(s.data["ca-bundle.crt"], []byte("BEGIN CERTIFICATE"))
		sawTwoCAs = sawTwoCAs || n == 2
		sawCAGone = sawTwoCAs && !bytes.Contains(s.data["ca-bundle.crt"], []byte(firstCA))
	}
	if failures > 0 {
		first.showLog()
	}
	t.Logf("%d serving certificates and a new CA in %s, %d failed requests", renewals, time.Since(started).Round(time.Second), failures)
	final := cl.servingSecret(t)
	cl.checkCABundle(t, final)
	for _, p := range []*pod{first, second} {
		if err := servesEventually(p, final); err != nil {
			p.showLog()
			t.Error(err)
		}
		// The keys stay in the Secret.
		log, err := os.ReadFile(p.log)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range [][]byte{[]byte("PRIVATE KEY"), final.data["tls.key"], final.data["ca.key"]} {
			if bytes.Contains(log, key) || bytes.Contains(log, []byte(base64.StdEncoding.EncodeToString(key))) {
				t.Errorf("%s holds a private key", filepath.Base(p.log))
			}
		}
	}
}

type servingSecret struct {
	resourceVersion string
	data            map[string][]byte
}

// servingSecret reads Secret kube-system/osm-apiserver-serving-cert.
func (cl *cluster) servingSecret(t *testing.T) servingSecret {
	t.Helper()
	out := cl.kubectl(t, "get", "secret", "-n", "kube-system", "osm-apiserver-serving-cert", "-o", "json")
	o := &unstructured.Unstructured{}
	if err := o.UnmarshalJSON([]byte(out)); err != nil {
		t.Fatal(err)
	}
	s := servingSecret{resourceVersion: o.GetResourceVersion(), data: map[string][]byte{}}
	raw, _, _ := unstructured.NestedStringMap(o.Object, "data")
	for k, v := range raw {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			t.Fatal(err)
		}
		s.data[k] = b
	}
	return s
}

// checkCABundle fails unless the APIService's caBundle is s's CA bundle.
func (cl *cluster) checkCABundle(t *testing.T, s servingSecret) {
	t.Helper()
	var got string
	for range 30 { // the server patches it right after writing the Secret
		got = cl.kubectl(t, "get", "apiservice", "v1alpha1.osm.k8c.io", "-o", "jsonpath={.spec.caBundle}")
		if got == base64.StdEncoding.EncodeToString(s.data["ca-bundle.crt"]) {
			return
		}
		time.Sleep(time.Second)
	}
	t.Errorf("APIService caBundle %.40q..., want the Secret's ca-bundle.crt", got)
}

// available waits until the APIService is Available and kube-apiserver
// proxies discovery of osm.k8c.io to p.
func (cl *cluster) available(t *testing.T, p *pod) error {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return fmt.Errorf("osm-apiserver exited: %w", *p.exitErr)
		case <-time.After(time.Second):
		}
		status, err := cl.kubectlErr("get", "apiservice", "v1alpha1.osm.k8c.io", "-o", `jsonpath={.status.conditions[?(@.type=="Available")].status} {.status.conditions[?(@.type=="Available")].message}`)
		if err != nil {
			last = err
			continue
		}
		if !strings.HasPrefix(status, "True") {
			last = fmt.Errorf("APIService not Available: %s", status)
			continue
		}
		if _, err := cl.kubectlErr("get", "--raw", "/apis/osm.k8c.io/v1alpha1"); err != nil {
			last = err
			continue
		}
		return nil
	}
	return fmt.Errorf("not Available within 3 minutes: %w", last)
}

// servesEventually waits until p serves the serving certificate of s.
func servesEventually(p *pod, s servingSecret) error {
	var got []byte
	for range 30 {
		conn, err := tls.Dial("tcp", "127.0.0.1:"+p.port, &tls.Config{InsecureSkipVerify: true}) // compared below, not verified
		if err == nil {
			got = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: conn.ConnectionState().PeerCertificates[0].Raw})
			_ = conn.Close()
			if bytes.Equal(got, s.data["tls.crt"]) {
				return nil
			}
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("%s serves another certificate than the Secret's", filepath.Base(p.log))
}

// renewAt is when the PEM certificate is due for renewal: 2/3 of its lifetime.
func renewAt(t *testing.T, certPEM []byte) time.Time {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatal("serving certificate not PEM")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c.NotBefore.Add(c.NotAfter.Sub(c.NotBefore) * 2 / 3)
}

// kubectlErr runs kubectl against cl and returns its output or its error.
func (cl *cluster) kubectlErr(args ...string) (string, error) {
	return run(time.Minute, cl.dir, []string{"KUBECACHEDIR=" + filepath.Join(cl.dir, "kube-cache")},
		cl.env["KUBECTL"], append([]string{"--kubeconfig", cl.env["KUBECONFIG"]}, args...)...)
}

// setPort sets the port field at path of obj.
func setPort(t *testing.T, obj map[string]any, port string, path ...string) {
	t.Helper()
	if err := unstructured.SetNestedField(obj, int64(atoi(t, port)), path...); err != nil {
		t.Fatal(err)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
