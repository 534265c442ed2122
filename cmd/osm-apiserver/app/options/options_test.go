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
		{name: "certificate files mean external", args: []string{"--tls-cert-file=a.crt", "--tls-private-key-file=a.key"}},
		{name: "external needs files", args: []string{"--serving-cert-mode=external"}, wantErr: "--serving-cert-mode=external needs --tls-cert-file"},
		{name: "self-signed takes no files", args: []string{"--serving-cert-mode=self-signed", "--tls-cert-file=a.crt", "--tls-private-key-file=a.key"}, wantErr: "--serving-cert-mode=self-signed"},
		{name: "unknown mode", args: []string{"--serving-cert-mode=acme"}, wantErr: `--serving-cert-mode must be self-managed, external or self-signed, got "acme"`},
		{name: "certificate outlives its CA", args: []string{"--serving-cert-validity=48h", "--serving-ca-validity=24h"}, wantErr: "--serving-cert-validity (48h0m0s) must be at least 1m and shorter than --serving-ca-validity"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := parseServe(t, tc.args...)
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

// Only the default mode without certificate files has the server keep its
// certificate in a Secret.
func TestServingCertMode(t *testing.T) {
	for _, tc := range []struct {
		mode, cert, key string
		want            string
	}{
		{ServingCertSelfManaged, "", "", ServingCertSelfManaged},
		{ServingCertSelfManaged, "a.crt", "a.key", ServingCertExternal},
		{ServingCertExternal, "a.crt", "a.key", ServingCertExternal},
		{ServingCertSelfSigned, "", "", ServingCertSelfSigned},
	} {
		f := ServingCertFlags{Mode: tc.mode}
		if got := f.mode(tc.cert, tc.key); got != tc.want {
			t.Errorf("mode %s with files %q %q: %s, want %s", tc.mode, tc.cert, tc.key, got, tc.want)
		}
	}
}

// Delegated authentication and authorization go to the cluster whose
// kube-apiserver proxies to the server: the worker cluster when there is
// one, since nodes and users authenticate there; explicit flags win.
func TestDelegationDefaults(t *testing.T) {
	for _, tc := range []struct {
		name             string
		args             []string
		wantAuthn, wantZ string
	}{
		{name: "in-cluster"},
		{name: "management only", args: []string{"--kubeconfig=/mgmt"}, wantAuthn: "/mgmt", wantZ: "/mgmt"},
		{name: "worker cluster", args: []string{"--kubeconfig=/mgmt", "--worker-cluster-kubeconfig=/worker"}, wantAuthn: "/worker", wantZ: "/worker"},
		{name: "worker cluster, in-cluster management", args: []string{"--worker-cluster-kubeconfig=/worker"}, wantAuthn: "/worker", wantZ: "/worker"},
		{name: "explicit flags win", args: []string{"--kubeconfig=/mgmt", "--worker-cluster-kubeconfig=/worker",
			"--authentication-kubeconfig=/authn", "--authorization-kubeconfig=/authz"}, wantAuthn: "/authn", wantZ: "/authz"},
		{name: "one explicit flag", args: []string{"--kubeconfig=/mgmt", "--worker-cluster-kubeconfig=/worker",
			"--authorization-kubeconfig=/mgmt"}, wantAuthn: "/worker", wantZ: "/mgmt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := parseServe(t, tc.args...)
			o.defaultDelegation()
			if got := o.Authentication.RemoteKubeConfigFile; got != tc.wantAuthn {
				t.Errorf("--authentication-kubeconfig %q, want %q", got, tc.wantAuthn)
			}
			if got := o.Authorization.RemoteKubeConfigFile; got != tc.wantZ {
				t.Errorf("--authorization-kubeconfig %q, want %q", got, tc.wantZ)
			}
		})
	}
}

// parseServe is serve's options after parsing args with all its flags.
func parseServe(t *testing.T, args ...string) *Options {
	t.Helper()
	o := NewOptions()
	all := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fss := o.Flags()
	for _, name := range fss.Order {
		all.AddFlagSet(fss.FlagSets[name])
	}
	if err := all.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}
