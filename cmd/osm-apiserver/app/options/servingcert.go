package options

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/osm-apiserver/osm-apiserver/pkg/servingcert"
)

// The serving certificate modes of --serving-cert-mode.
const (
	// ServingCertSelfManaged: a CA and certificate osm-apiserver keeps in
	// Secret <--service-namespace>/osm-apiserver-serving-cert, and the
	// APIService's caBundle.
	ServingCertSelfManaged = "self-managed"
	// ServingCertExternal: --tls-cert-file and --tls-private-key-file, e.g.
	// from cert-manager; osm-apiserver writes no Secret and no caBundle.
	ServingCertExternal = "external"
	// ServingCertSelfSigned: a certificate made at start, in memory only,
	// which nobody can verify (local runs, tests).
	ServingCertSelfSigned = "self-signed"
)

// ServingCertFlags choose where the serving certificate comes from.
type ServingCertFlags struct {
	Mode string
	servingcert.Validity
}

// NewServingCertFlags returns the defaults.
func NewServingCertFlags() *ServingCertFlags {
	return &ServingCertFlags{Mode: ServingCertSelfManaged, Validity: servingcert.DefaultValidity}
}

// AddFlags registers the flags on fs.
func (f *ServingCertFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Mode, "serving-cert-mode", f.Mode, `Where the serving certificate comes from: "self-managed" (a CA and certificate kept in Secret <--service-namespace>/`+servingcert.SecretName+`, renewed before they expire, and the caBundle of APIService `+servingcert.APIServiceName+`), "external" (--tls-cert-file and --tls-private-key-file, e.g. from cert-manager; the default when they are given) or "self-signed" (made at start, in memory; nothing verifies it).`)
	fs.DurationVar(&f.Cert, "serving-cert-validity", f.Cert, "Self-managed: validity of a new serving certificate; renewed at 2/3 of it.")
	fs.DurationVar(&f.CA, "serving-ca-validity", f.CA, "Self-managed: validity of a new CA; a next CA joins the caBundle at 2/3 of it, the serving certificate moves to it half way to the old CA's expiry.")
}

// mode is the mode in effect: external when certificate files are given and
// --serving-cert-mode is the default.
func (f *ServingCertFlags) mode(certFile, keyFile string) string {
	if f.Mode == ServingCertSelfManaged && (certFile != "" || keyFile != "") {
		return ServingCertExternal
	}
	return f.Mode
}

// Validate checks the flags against the certificate files given.
func (f *ServingCertFlags) Validate(certFile, keyFile string) []error {
	var errs []error
	files := certFile != "" && keyFile != ""
	switch mode := f.mode(certFile, keyFile); mode {
	case ServingCertExternal:
		if !files {
			errs = append(errs, errors.New("--serving-cert-mode=external needs --tls-cert-file and --tls-private-key-file"))
		}
	case ServingCertSelfSigned:
		if certFile != "" || keyFile != "" {
			errs = append(errs, errors.New("--serving-cert-mode=self-signed makes its own certificate: drop --tls-cert-file and --tls-private-key-file"))
		}
	case ServingCertSelfManaged:
	default:
		errs = append(errs, fmt.Errorf("--serving-cert-mode must be %s, %s or %s, got %q", ServingCertSelfManaged, ServingCertExternal, ServingCertSelfSigned, mode))
	}
	if f.Cert < time.Minute || f.CA <= f.Cert {
		errs = append(errs, fmt.Errorf("--serving-cert-validity (%s) must be at least 1m and shorter than --serving-ca-validity (%s)", f.Cert, f.CA))
	}
	return errs
}
