package syncer

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestOptions(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr bool
		check   func(*Options) bool
	}{
		{args: nil, check: func(o *Options) bool { return o.LeaderElection.LeaderElect && o.TokenTTL == DefaultTokenTTL }},
		{args: []string{"--bootstrap-token-ttl=30s", "--bootstrap-token-renew-before=20s", "--leader-elect=false"},
			check: func(o *Options) bool { return o.TokenTTL == 30*time.Second && !o.LeaderElection.LeaderElect }},
		{args: []string{"--bootstrap-token-ttl=30s", "--bootstrap-token-renew-before=30s"}, wantErr: true},
		{args: []string{"--syncer-workers=0"}, wantErr: true},
	}
	for _, tc := range tests {
		o := NewOptions()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		errs := o.Validate()
		if (len(errs) > 0) != tc.wantErr {
			t.Errorf("%v: Validate() = %v, want error %v", tc.args, errs, tc.wantErr)
		}
		if tc.check != nil && !tc.check(o) {
			t.Errorf("%v: options %+v", tc.args, o)
		}
		le := o.LeaderElectionFor(nil, "osm")
		if le.Namespace != "osm" || le.Name != "osm-apiserver-syncer" {
			t.Errorf("%v: lease %s/%s, want osm/osm-apiserver-syncer", tc.args, le.Namespace, le.Name)
		}
	}
}
