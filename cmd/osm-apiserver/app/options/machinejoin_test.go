package options

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestMachineJoinFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr bool
	}{
		{args: nil},
		{args: []string{"--machine-join-credential-ttl=3h", "--machine-join-retry-window=30m"}},
		{args: []string{"--machine-join-credential-ttl=5m"}, wantErr: true},
		{args: []string{"--machine-join-credential-ttl=20m", "--machine-join-retry-window=20m"}, wantErr: true},
		{args: []string{"--machine-join-retry-window=0s"}, wantErr: true},
	} {
		o := NewMachineJoinFlags()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if errs := o.Validate(); (len(errs) > 0) != tc.wantErr {
			t.Errorf("%v: Validate() = %v, want error %v", tc.args, errs, tc.wantErr)
		}
	}
	o := NewMachineJoinFlags()
	if o.CredentialTTL != time.Hour || o.RetryWindow != 10*time.Minute {
		t.Errorf("defaults %+v", o.Options)
	}
}
