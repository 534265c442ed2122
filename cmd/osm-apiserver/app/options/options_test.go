package options

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestServeFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "defaults are valid"},
		{name: "empty namespace", args: []string{"--namespace="}, wantErr: "--namespace"},
		{name: "cache memory", args: []string{"--render-cache-memory=0"}, wantErr: "--render-cache-memory"},
		{name: "cache memory not a quantity", args: []string{"--render-cache-memory=lots"}, wantErr: "--render-cache-memory"},
		{name: "concurrent renders", args: []string{"--max-concurrent-renders=0"}, wantErr: "--max-concurrent-renders"},
		{name: "concurrent previews", args: []string{"--max-concurrent-previews=0"}, wantErr: "--max-concurrent-previews"},
		{name: "node options are checked", args: []string{"--cluster-dns=not-an-ip"}, wantErr: "--cluster-dns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			all := pflag.NewFlagSet("serve", pflag.ContinueOnError)
			fss := o.Flags()
			for _, name := range fss.Order {
				all.AddFlagSet(fss.FlagSets[name])
			}
			if err := all.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			if tc.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one naming %s", err, tc.wantErr)
			}
		})
	}
}

// serve has no token flags: the syncer keeps tokens per MachineDeployment.
func TestServeHasNoTokenFlags(t *testing.T) {
	fss := NewOptions().Flags()
	for _, fs := range fss.FlagSets {
		for _, name := range []string{"bootstrap-token", "cloud-init-getter-token"} {
			if fs.Lookup(name) != nil {
				t.Errorf("serve has --%s", name)
			}
		}
	}
}
