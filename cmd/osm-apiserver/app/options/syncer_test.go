package options

import (
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/osm-apiserver/osm-apiserver/pkg/server"
	"github.com/osm-apiserver/osm-apiserver/pkg/syncer"
)

func TestSyncerFlags(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr bool
		check   func(*SyncerFlags) bool
	}{
		{args: nil, check: func(o *SyncerFlags) bool {
			return o.LeaderElection.LeaderElect && o.TokenTTL == syncer.DefaultTokenTTL && o.InstallDefaultOSPs
		}},
		{args: []string{"--bootstrap-token-ttl=30s", "--bootstrap-token-renew-before=20s", "--leader-elect=false"},
			check: func(o *SyncerFlags) bool { return o.TokenTTL == 30*time.Second && !o.LeaderElection.LeaderElect }},
		{args: []string{"--bootstrap-token-ttl=30s", "--bootstrap-token-renew-before=30s"}, wantErr: true},
		{args: []string{"--syncer-workers=0"}, wantErr: true},
		{args: []string{"--disable-default-osps"}, check: func(o *SyncerFlags) bool { return !o.InstallDefaultOSPs }},
	}
	for _, tc := range tests {
		o := NewSyncerFlags()
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
		var cfg server.Config
		o.ApplyTo(&cfg)
		if le := cfg.LeaderElection; le.Namespace != "" || le.Name != "osm-apiserver-syncer" || le.Enabled != o.LeaderElection.LeaderElect {
			t.Errorf("%v: lease %+v, want osm-apiserver-syncer in the server's namespace", tc.args, le)
		}
	}
}
