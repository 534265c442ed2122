package options

import (
	"errors"
	"time"

	"github.com/spf13/pflag"

	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
)

// MachineJoinFlags are the flags of the MachineJoin exchange: how long a
// machine's join credential lives, and how long the same boot may ask again.
type MachineJoinFlags struct {
	nodejoin.Options
}

// NewMachineJoinFlags returns the defaults.
func NewMachineJoinFlags() *MachineJoinFlags {
	return &MachineJoinFlags{Options: nodejoin.DefaultOptions()}
}

// AddFlags adds the flags to fs.
func (o *MachineJoinFlags) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.CredentialTTL, "machine-join-credential-ttl", o.CredentialTTL,
		"Validity of a machine's kubelet bootstrap credential from the first answer to its MachineJoin (at least 10m). "+
			"It is revoked as soon as the machine's Node registered; make it longer than a slow boot takes from the exchange to the kubelet's CSR.")
	fs.DurationVar(&o.RetryWindow, "machine-join-retry-window", o.RetryWindow,
		"How long after the first answer a MachineJoin of the same boot is answered again (an answer lost on the way); any other is refused.")
}

// Validate checks the flags.
func (o *MachineJoinFlags) Validate() []error {
	var errs []error
	if o.CredentialTTL < 10*time.Minute {
		errs = append(errs, errors.New("--machine-join-credential-ttl must be at least 10m, the shortest token kube-apiserver issues"))
	}
	if o.RetryWindow <= 0 || o.RetryWindow >= o.CredentialTTL {
		errs = append(errs, errors.New("--machine-join-retry-window must be positive and shorter than --machine-join-credential-ttl"))
	}
	return errs
}

// ApplyTo copies the flags into cfg.
func (o *MachineJoinFlags) ApplyTo(cfg *nodejoin.Options) {
	*cfg = o.Options
}
