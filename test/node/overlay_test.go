package node

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/test/node/nodevm"
)

// The overlay of a boot with overlay set: an OperatingSystemProfileOverlay
// in the boot's namespace, selecting its MD by label, adds a CA to the host
// trust store (as docs/overlays.md's Ubuntu example: the file, and a drop-in
// that makes osm-setup.service refresh the store first) and a unit.
const (
	overlayName = "node-test-ca-and-unit"
	overlayUnit = "osm-node-test-overlay.service"
	// bootLabel on each boot's MD names the boot (machines_test.go).
	bootLabel = "osm-node-test/boot"
)

var overlayResource = schema.GroupVersionResource{Group: overlaysv1alpha1.GroupName, Version: "v1alpha1", Resource: "operatingsystemprofileoverlays"}

// nodeOverlay is what the node must show: a leaf certificate its trust
// store verifies once it trusts the overlay's CA.
type nodeOverlay struct {
	leaf []byte
}

// applyOverlay creates the boot's overlay, before its MD, so that the MD's
// first payloads have it.
func applyOverlay(ctx context.Context, b boot) (*nodeOverlay, error) {
	caPEM, leafPEM, err := caAndLeaf()
	if err != nil {
		return nil, err
	}
	o := &overlaysv1alpha1.OperatingSystemProfileOverlay{
		TypeMeta:   metav1.TypeMeta{APIVersion: overlaysv1alpha1.SchemeGroupVersion.String(), Kind: "OperatingSystemProfileOverlay"},
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: overlayName},
	}
	o.Spec.Profiles = []string{"osp-ubuntu"}
	o.Spec.MachineDeploymentSelector = &metav1.LabelSelector{MatchLabels: map[string]string{bootLabel: b.name}}
	enable := true
	unit := "[Unit]\nDescription=Added by the node test's overlay\nAfter=network-online.target\n\n" +
		"[Service]\nType=oneshot\nRemainAfterExit=true\nExecStart=/bin/sh -c 'echo overlay >/run/osm-node-test-overlay'\n\n" +
		"[Install]\nWantedBy=multi-user.target\n"
	o.Spec.ProvisioningConfig = overlaysv1alpha1.OverlayConfig{
		Files: []ospv1alpha1.File{{Path: "/usr/local/share/ca-certificates/node-test-ca.crt",
			Content: ospv1alpha1.FileContent{Inline: &ospv1alpha1.FileContentInline{Data: string(caPEM)}}}},
		DropIns: []overlaysv1alpha1.UnitDropIn{{Unit: "osm-setup.service", Name: "10-node-test-ca.conf",
			Content: "[Service]\nExecStartPre=/usr/sbin/update-ca-certificates\n"}},
		Units: []ospv1alpha1.Unit{{Name: overlayUnit, Enable: &enable, Content: &unit}},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, err
	}
	if _, err := env.dynamic.Resource(overlayResource).Namespace(testNamespace).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("overlay %s: %w", overlayName, err)
	}
	progress("%s: overlay %s/%s adds a CA and %s", b.name, testNamespace, overlayName, overlayUnit)
	return &nodeOverlay{leaf: leafPEM}, nil
}

// overlayDropIn is where the overlay's drop-in must be among osm-setup's.
const overlayDropIn = "/osm-setup.service.d/10-node-test-ca.conf"

// overlayOnNode is what the node shows of the overlay.
type overlayOnNode struct {
	dropIn     bool   // in osm-setup.service's DropInPaths
	unitLoad   string // the unit's LoadState: "loaded", or "not-found"
	unitActive string
	caFile     bool
}

func readOverlayOnNode(ctx context.Context, vm *nodevm.VM) (overlayOnNode, error) {
	out, err := vm.Agent.Run(ctx, "systemctl show -p DropInPaths osm-setup.service && systemctl show -p LoadState -p ActiveState "+overlayUnit+
		" && if [ -e /usr/local/share/ca-certificates/node-test-ca.crt ]; then echo CAFile=yes; else echo CAFile=no; fi")
	if err != nil {
		return overlayOnNode{}, err
	}
	var o overlayOnNode
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "DropInPaths":
			for _, p := range strings.Fields(v) {
				o.dropIn = o.dropIn || strings.HasSuffix(p, overlayDropIn)
			}
		case "LoadState":
			o.unitLoad = v
		case "ActiveState":
			o.unitActive = v
		case "CAFile":
			o.caFile = v == "yes"
		}
	}
	if o.unitLoad == "" {
		return o, fmt.Errorf("systemctl show printed no LoadState: %q", out)
	}
	return o, nil
}

// checkOverlay checks on the node that it trusts the CA (a leaf the CA
// signed verifies against the system's bundle), that systemd loaded the
// drop-in for osm-setup.service, and that the unit is loaded and active (a
// missing unit has LoadState not-found; its ActiveState alone would say
// inactive for both).
func checkOverlay(ctx context.Context, vm *nodevm.VM, b boot, o *nodeOverlay) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	r, err := vm.Agent.Exec(ctx, "openssl verify -CAfile /etc/ssl/certs/ca-certificates.crt /dev/stdin", o.leaf)
	if err != nil {
		return fmt.Errorf("overlay %s: %w", overlayName, err)
	}
	if r.ExitCode != 0 {
		return fmt.Errorf("overlay %s: the node does not trust its CA: %s%s", overlayName, r.Stdout, r.Stderr)
	}
	on, err := readOverlayOnNode(ctx, vm)
	if err != nil {
		return fmt.Errorf("overlay %s: %w", overlayName, err)
	}
	if !on.dropIn {
		return fmt.Errorf("overlay %s: osm-setup.service's DropInPaths lack …%s", overlayName, overlayDropIn)
	}
	if on.unitLoad != "loaded" || on.unitActive != "active" {
		return fmt.Errorf("overlay %s: unit %s is %s and %s, want loaded and active", overlayName, overlayUnit, on.unitLoad, on.unitActive)
	}
	return nil
}

// checkNoOverlay checks that the node of an MD the overlay does not select
// has nothing of it, by the same reads that find it where it is applied.
func checkNoOverlay(ctx context.Context, vm *nodevm.VM) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	on, err := readOverlayOnNode(ctx, vm)
	if err != nil {
		return fmt.Errorf("overlay %s on a node it does not select: %w", overlayName, err)
	}
	if on.dropIn || on.unitLoad != "not-found" || on.caFile {
		return fmt.Errorf("overlay %s on a node it does not select: drop-in %v, unit %s, CA file %v", overlayName, on.dropIn, on.unitLoad, on.caFile)
	}
	return nil
}

// caAndLeaf returns a CA certificate and a leaf it signed, in PEM.
func caAndLeaf() (caPEM, leafPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "osm node test overlay CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "mirror.node-test.example"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &leafKey.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), nil
}
