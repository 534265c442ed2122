package bootreports

import (
	"strings"
	"testing"
)

const (
	jwt       = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiJrdWJlcm5ldGVzIiwic3ViIjoic3lzdGVtOnNlcnZpY2VhY2NvdW50In0.c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWduYXR1cmU"
	bootstrap = "abcdef.0123456789abcdef"
	pemKey    = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY/PuoAoGCCqGSM49\nAwEHoUQDQgAEPR3tU2Fta5B8ceHSb9ioIdKHhW3b5N1FVmQ5fNXCgpHbAaXXtZeXq\n-----END EC PRIVATE KEY-----"
)

func TestScrub(t *testing.T) {
	tests := []struct {
		name, in string
		keep     []string // must survive
	}{
		{"jwt", "curl: token " + jwt + " rejected", []string{"curl: token", "rejected"}},
		{"bearer header", "> Authorization: Bearer not-a-jwt-but-secret\n< HTTP/1.1 401", []string{"Authorization: Bearer", "HTTP/1.1 401"}},
		{"basic header", "Authorization: Basic dXNlcjpwYXNz", []string{"Authorization: Basic"}},
		{"bootstrap token", "kubeadm join --token " + bootstrap + " 10.0.0.1:6443", []string{"kubeadm join --token", "10.0.0.1:6443"}},
		{"pem key", "writing key\n" + pemKey + "\ndone", []string{"writing key", "done"}},
		{"pem key cut by the tail", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA", nil},
		{"url credentials", "fetching https://admin:s3cr3t@mirror.example/pkg.deb", []string{"https://", "@mirror.example/pkg.deb"}},
		{"key=value", `password=hunter2 token: "abc123" registry_api_key=zzz`, []string{"password=", "token: "}},
	}
	secrets := []string{jwt, "not-a-jwt-but-secret", "dXNlcjpwYXNz", bootstrap, "MHcCAQEEIIrYSSNQ", "MIIEowIBAAKCAQEA", "s3cr3t", "hunter2", "abc123", "zzz"}
	for _, tc := range tests {
		got := Scrub(tc.in, nil)
		for _, s := range secrets {
			if strings.Contains(got, s) {
				t.Errorf("%s: %q survived: %q", tc.name, s, got)
			}
		}
		for _, k := range tc.keep {
			if !strings.Contains(got, k) {
				t.Errorf("%s: %q lost: %q", tc.name, k, got)
			}
		}
		if !strings.Contains(got, Redacted) {
			t.Errorf("%s: nothing redacted: %q", tc.name, got)
		}
	}
	// What is not a credential stays as it is.
	for _, s := range []string{
		"E: Unable to locate package containerd",
		"sha256sum: WARNING: 1 computed checksum did NOT match",
		"curl: (22) The requested URL returned error: 404",
		"kubelet.service: Main process exited, code=exited, status=1/FAILURE",
		"version 1.33.4-00, image registry.k8s.io/pause:3.10",
		"basic setup done; the bearer of bad news",
	} {
		if got := Scrub(s, nil); got != s {
			t.Errorf("Scrub(%q) = %q", s, got)
		}
	}
}

func TestTail(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		b.WriteString(strings.Repeat("x", 10) + " line " + string(rune('a'+i%26)) + "\n")
	}
	got := Tail(b.String())
	if n := strings.Count(got, "\n") + 1; n != MaxLogTailLines {
		t.Errorf("%d lines, want %d", n, MaxLogTailLines)
	}
	long := strings.Repeat("y", 100) + "\n" + strings.Repeat("z", 5000)
	if got := Tail(long); len(got) > MaxLogTailBytes || strings.Contains(got, "y") {
		t.Errorf("tail of a long line: %d bytes", len(got))
	}
	cut := strings.Repeat(strings.Repeat("w", 99)+"\n", 40) + "end"
	got = Tail(cut)
	if len(got) > MaxLogTailBytes || !strings.HasSuffix(got, "end") || !strings.HasPrefix(got, strings.Repeat("w", 99)) {
		t.Errorf("a cut line must go whole: %q...", got[:20])
	}
	if got := Tail("é" + strings.Repeat("é", 3000)); !strings.HasPrefix(got, "é") || len(got) > MaxLogTailBytes {
		t.Errorf("tail cut inside a rune: %q", got[:4])
	}
}

func TestFirstErrorLine(t *testing.T) {
	tests := map[string]string{
		"Reading package lists...\nE: Unable to locate package containerd\nE: another": "E: Unable to locate package containerd",
		"downloading\nsha256sum: kubelet: FAILED\nexit":                                "sha256sum: kubelet: FAILED",
		"all fine\nlast words\n\n":                                                     "last words",
		"":                                                                             "",
	}
	for in, want := range tests {
		if got := FirstErrorLine(in); got != want {
			t.Errorf("FirstErrorLine(%q) = %q, want %q", in, got, want)
		}
	}
	if got := FirstErrorLine("error " + strings.Repeat("x", 500)); len(got) > maxLine {
		t.Errorf("%d bytes", len(got))
	}
}
