// Package servingcert keeps osm-apiserver's own serving certificate: a CA and
// a certificate for the Service's names, in one Secret that every replica
// shares, renewed well before they expire; each replica serves the
// certificate of that Secret and reloads it when it changes, and the
// APIService's caBundle follows the Secret's CA bundle.
//
// Plan decides, from the Secret's data and the time, what the Secret should
// hold (pki.go); Controller reads and writes the Secret, serves its
// certificate (a dynamiccertificates.CertKeyContentProvider) and keeps the
// caBundle (controller.go, apiservice.go).
//
// Rotation: the serving certificate is renewed at 2/3 of its lifetime. At 2/3
// of the CA's lifetime a next CA joins the bundle beside the current one; half
// way between then and the current CA's expiry the serving certificate moves
// to the next CA, which becomes the current one; the previous CA stays in the
// bundle until it expires. So kube-apiserver trusts a new CA long before any
// replica serves a certificate it signed.
//
// The private keys live in the Secret only: nothing here logs them or puts
// them anywhere else.
package servingcert
