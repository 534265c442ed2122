package nodejoin

import "time"

// Options are the settings of the exchange and of the leader's Controller.
type Options struct {
	// CredentialTTL is how long a machine's join credential is valid after
	// its first answer (at least 10 minutes: kube-apiserver's shortest token).
	CredentialTTL time.Duration
	// RetryWindow is how long after the first answer the same boot is
	// answered again; shorter than CredentialTTL.
	RetryWindow time.Duration
}

// DefaultOptions are the defaults of the flags.
func DefaultOptions() Options {
	return Options{CredentialTTL: DefaultCredentialTTL, RetryWindow: DefaultRetryWindow}
}
