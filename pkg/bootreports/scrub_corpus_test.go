package bootreports

import (
	"encoding/base64"
	"strings"
	"testing"
)

// wrap returns s wrapped at width columns, as base64(1) (76) and openssl
// (64) write it.
func wrap(s string, width int) string {
	var lines []string
	for len(s) > width {
		lines = append(lines, s[:width])
		s = s[width:]
	}
	return strings.Join(append(lines, s), "\n")
}

// b64 is base64 of s, standard alphabet, padded.
func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// fetchJWT stands for an MD's fetch token (a ServiceAccount token).
const fetchJWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6Ik1EOFkifQ.eyJhdWQiOlsiaHR0cHM6Ly9rdWJlcm5ldGVzLmRlZmF1bHQuc3ZjIl0sImV4cCI6MTc2NzIyNTYwMCwiaWF0IjoxNzY3MjIyMDAwLCJpc3MiOiJodHRwczovL2t1YmVybmV0ZXMuZGVmYXVsdC5zdmMiLCJrdWJlcm5ldGVzLmlvIjp7Im5hbWVzcGFjZSI6ImNsb3VkLWluaXQtc2V0dGluZ3MifSwic3ViIjoic3lzdGVtOnNlcnZpY2VhY2NvdW50OmNsb3VkLWluaXQtc2V0dGluZ3M6b3NtLWZldGNoLXBvb2wifQ.Q2xWbVNpZ25hdHVyZVNpZ25hdHVyZVNpZ25hdHVyZVNpZ25hdHVyZVNpZ25hdHVyZQ"

// rsaBody is the body of a private key whose BEGIN line a tail cut off.
const rsaBody = "MIIEowIBAAKCAQEAw3BZy6qG8JX0Zb1V2i5cRr2kqPV8Xx2pH7z9aKQb4h1oWm0T\n" +
	"Jk8u3d2YpQ6xW9bN1vC4sD7eF0gH2iJ5kL8mN1oP4qR7sT0uV3wX6yZ9aB2cD5eF\n" +
	"8gH1iJ4kL7mN0oP3qR6sT9uV2wX5yZ8aB1cD4eF7gH0iJ3kL6mN9oP2qR5sT8uV\n" +
	"1wX4yZ7aB0cD3eF6gH9iJ2kL5mN8oP1qR4sT7uV0wX3yZ6aB9cD2eF5gH8iJ1kL=="

// scrubCorpus are realistic log tails of failed steps, each with the
// credentials it holds. Every credential is longer than anything Redacted
// could leave of it.
var scrubCorpus = []struct {
	name    string
	tail    string
	secrets []string
	keep    []string // ordinary text of the same tail that must survive
}{
	// The six of issue 27.
	{"aws secret access key",
		"+ export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n+ export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n+ aws s3 cp s3://images/kubelet /usr/bin/kubelet\nfatal error: An error occurred (403) when calling the HeadObject operation: Forbidden",
		[]string{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
		[]string{"+ export AWS_SECRET_ACCESS_KEY=", "fatal error: An error occurred (403)"}},
	{"docker config auth",
		"+ cat /root/.docker/config.json\n{\n  \"auths\": {\n    \"registry.example.com\": {\n      \"auth\": \"cm9ib3QkY2k6U3VwM3JTM2NyM3RQYXNzIQ==\"\n    }\n  }\n}\nError response from daemon: pull access denied for registry.example.com/pause",
		[]string{"cm9ib3QkY2k6U3VwM3JTM2NyM3RQYXNzIQ", "Sup3rS3cr3tPass!"},
		[]string{`"auths": {`, `"registry.example.com": {`, "Error response from daemon: pull access denied"}},
	{"kubeconfig client-key-data",
		"+ cat /etc/kubernetes/admin.conf\nusers:\n- name: admin\n  user:\n    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n    client-key-data: " + b64("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----\n") + "\nerror: unable to connect to the server",
		[]string{b64("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun")[20:60]},
		[]string{"client-key-data: ", "error: unable to connect to the server"}},
	{"curl -u user:password",
		"+ curl -fsSL -u deploy:Tr0ub4dor-and-3 https://artifacts.example.com/kubelet -o /usr/bin/kubelet\ncurl: (22) The requested URL returned error: 401",
		[]string{"Tr0ub4dor-and-3"},
		[]string{"curl -fsSL -u deploy:", "https://artifacts.example.com/kubelet", "curl: (22) The requested URL returned error: 401"}},
	{"--password argument",
		"+ docker login registry.example.com --username robot --password 'correct horse battery staple'\nError response from daemon: Get \"https://registry.example.com/v2/\": unauthorized",
		[]string{"correct horse battery staple", "horse battery"},
		[]string{"--username robot --password", "unauthorized"}},
	{"base64-wrapped bearer token",
		"+ echo $AUTH_HEADER | base64\n" + wrap(b64("Authorization: Bearer "+fetchJWT), 76) + "\n+ curl -H @header https://10.0.0.1:6443/api\ncurl: (22) The requested URL returned error: 403",
		[]string{fetchJWT[40:80], b64("Authorization: Bearer " + fetchJWT)[100:140], b64("Authorization: Bearer " + fetchJWT)[300:340]},
		[]string{"+ echo $AUTH_HEADER | base64", "curl: (22) The requested URL returned error: 403"}},

	// The other shapes.
	{"secret-named keys in any case and separator",
		"secret_key: 9f8e7d6c5b4a39281706\nPassword = hunter2hunter2\napi-key=ak_live_51HxJkL2eZvKYlo2C\nGITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a\nDB_PASSWORD=\"pa ss word 42\"\nexit status 1",
		[]string{"9f8e7d6c5b4a39281706", "hunter2hunter2", "ak_live_51HxJkL2eZvKYlo2C", "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "pa ss word 42"},
		[]string{"secret_key: ", "Password = ", "api-key=", "GITHUB_TOKEN=", "exit status 1"}},
	{"json credential fields",
		`{"username":"robot","password":"pw-0f9e8d7c6b5a","identitytoken":"idt-7a6b5c4d3e2f1a0b","registrytoken":"rgt-1a2b3c4d5e6f7a8b","token":"tok-99aa88bb77cc66dd"}` + "\nfailed to pull image",
		[]string{"pw-0f9e8d7c6b5a", "idt-7a6b5c4d3e2f1a0b", "rgt-1a2b3c4d5e6f7a8b", "tok-99aa88bb77cc66dd"},
		[]string{`"username":"robot"`, "failed to pull image"}},
	{"kubeconfig token line",
		"apiVersion: v1\nkind: Config\nusers:\n- name: kubelet-bootstrap\n  user:\n    token: 07401b.f395accd246ae52d\nerror: You must be logged in to the server (Unauthorized)",
		[]string{"f395accd246ae52d"},
		[]string{"kind: Config", "token: ", "error: You must be logged in to the server (Unauthorized)"}},
	{"url user-info",
		"Get:1 https://mirror-user:m1rr0r-pa55w0rd@apt.example.com/ubuntu noble InRelease\nErr:2 https://ghp_abcdefghijklmnopqrstuvwxyz0123@git.example.com/repo.git\nE: Failed to fetch",
		[]string{"m1rr0r-pa55w0rd", "ghp_abcdefghijklmnopqrstuvwxyz0123"},
		[]string{"apt.example.com/ubuntu noble InRelease", "E: Failed to fetch"}},
	{"--user and --password=",
		"+ wget --user=ci --password=W9vK2mQ8pL4x https://files.example.com/cni.tgz\n+ curl --user admin:Adm1nPassw0rd! https://files.example.com\n+ mysql --password=sqlpw1234567 -e 'select 1'\nERROR 1045 (28000): Access denied",
		[]string{"W9vK2mQ8pL4x", "Adm1nPassw0rd!", "sqlpw1234567"},
		[]string{"wget --user=ci --password=", "ERROR 1045 (28000): Access denied"}},
	{"-p of a registry login",
		"+ podman login -u robot -p Pw0rd-f0r-r0b0t quay.example.com\nError: authenticating creds for \"quay.example.com\": unauthorized",
		[]string{"Pw0rd-f0r-r0b0t"},
		[]string{"podman login -u robot -p", "unauthorized"}},
	{"pem key cut off at its beginning",
		rsaBody + "\n-----END RSA PRIVATE KEY-----\nchmod: cannot access '/etc/ssl/key.pem': No such file or directory",
		[]string{"MIIEowIBAAKCAQEAw3BZy6qG8JX0", "1wX4yZ7aB0cD3eF6gH9iJ2kL5mN8"},
		[]string{"chmod: cannot access '/etc/ssl/key.pem': No such file or directory"}},
	{"pem key whole",
		"writing new private key to 'node.key'\n-----BEGIN PRIVATE KEY-----\n" + rsaBody + "\n-----END PRIVATE KEY-----\ndone",
		[]string{"MIIEowIBAAKCAQEAw3BZy6qG8JX0", "1wX4yZ7aB0cD3eF6gH9iJ2kL5mN8"},
		[]string{"writing new private key to 'node.key'", "done"}},
	{"authorization headers",
		"> GET /api HTTP/1.1\n> Authorization: Bearer " + fetchJWT + "\n< HTTP/1.1 401 Unauthorized\n> Authorization: Basic Ym9iOnNlY3JldHNlY3JldA==\n> Authorization: token gho_a1b2c3d4e5f6a7b8c9d0",
		[]string{fetchJWT[20:60], "Ym9iOnNlY3JldHNlY3JldA", "gho_a1b2c3d4e5f6a7b8c9d0"},
		[]string{"> GET /api HTTP/1.1", "< HTTP/1.1 401 Unauthorized", "Authorization: Bearer ", "Authorization: Basic "}},
	{"wrapped base64 under a secret key",
		"data:\n  token: " + wrap(b64(strings.Repeat("s3cr3t-random-bytes-", 8)), 64) + "\nError from server (Forbidden)",
		[]string{b64(strings.Repeat("s3cr3t-random-bytes-", 8))[0:40], b64(strings.Repeat("s3cr3t-random-bytes-", 8))[70:120], b64(strings.Repeat("s3cr3t-random-bytes-", 8))[160:200]},
		[]string{"data:", "token: ", "Error from server (Forbidden)"}},
	{"kubeadm join",
		"+ kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash sha256:7c2b6f0d\nerror execution phase preflight: couldn't validate the identity of the API Server",
		[]string{"0123456789abcdef"},
		[]string{"kubeadm join 10.0.0.1:6443 --token", "--discovery-token-ca-cert-hash sha256:7c2b6f0d", "error execution phase preflight"}},
}

// ordinaryLines are output steps print that holds no credential: Scrub
// keeps them as they are.
var ordinaryLines = []string{
	"Reading package lists... Done",
	"E: Unable to locate package containerd",
	"Get:1 http://archive.ubuntu.com/ubuntu noble InRelease [256 kB]",
	"Fetched 1,234 kB in 2s (617 kB/s)",
	"Setting up kubelet (1.33.4-1.1) ...",
	"kubelet.service: Main process exited, code=exited, status=1/FAILURE",
	"Failed to start kubelet.service - kubelet: The Kubernetes Node Agent.",
	"  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current",
	"100 55.8M  100 55.8M    0     0  41.2M      0  0:00:01  0:00:01 --:--:-- 41.3M",
	"curl: (22) The requested URL returned error: 404",
	"curl -fsSL https://dl.k8s.io/release/v1.33.4/bin/linux/amd64/kubelet -o /usr/bin/kubelet",
	"sha256sum: WARNING: 1 computed checksum did NOT match",
	"waiting for the bootstrap token to be accepted by the API server",
	"the token expired; requesting a new token from the server",
	"basic setup done; the bearer of bad news",
	"version 1.33.4-00, image registry.k8s.io/pause:3.10",
	"+ docker run -u 1000:1000 -p 8080:80 nginx",
	"+ docker login --username robot --password-stdin registry.example.com",
	"+ mkdir -p /etc/kubernetes/manifests",
	"+ install -D -m 0644 /var/lib/kubelet/config.yaml /etc/kubernetes/kubelet.conf",
	"Created symlink /etc/systemd/system/multi-user.target.wants/kubelet.service → /usr/lib/systemd/system/kubelet.service.",
}

func TestScrubCorpus(t *testing.T) {
	for _, tc := range scrubCorpus {
		t.Run(tc.name, func(t *testing.T) {
			got := Scrub(tc.tail, nil)
			for _, s := range tc.secrets {
				if strings.Contains(got, s) {
					t.Errorf("%q survived:\n%s", s, got)
				}
			}
			for _, k := range tc.keep {
				if !strings.Contains(got, k) {
					t.Errorf("%q lost:\n%s", k, got)
				}
			}
		})
	}
	for _, line := range ordinaryLines {
		if got := Scrub(line, nil); got != line {
			t.Errorf("Scrub(%q) = %q", line, got)
		}
	}
	// Ordinary lines stay as they are in a tail too.
	tail := strings.Join(ordinaryLines, "\n")
	if got := Scrub(tail, nil); got != tail {
		t.Errorf("an ordinary tail changed:\n%s", got)
	}
}

// The MD's credentials the server knows are scrubbed in every form a log
// shows them, even where no pattern would find them.
func TestScrubKnownValues(t *testing.T) {
	const (
		kubelet  = "k7x2pq.q8w7e6r5t4y3u2i1"
		password = "Blue-Moon-Over-Riga"
		userPass = "robot:" + password
	)
	// A fetch token that is no JWT shape, so that patterns alone miss it.
	fetch := strings.Repeat("Zm9vYmFyYmF6cXV4", 6) + "Q"
	known := NewKnown(kubelet, kubelet[7:], fetch, password, userPass)
	embedded := b64(`{"kind":"Config","users":[{"user":{"tok":"` + fetch + `"}}]}`)
	tails := map[string][]string{
		"plain":                         {"fetched with " + fetch + " ok", "kubelet " + kubelet, "secret part " + kubelet[7:] + " only", "pw " + password + " rejected"},
		"base64 std":                    {"x " + b64(fetch) + " y", "cfg " + b64(userPass) + " end", b64(password)},
		"base64 url, no padding":        {base64.RawURLEncoding.EncodeToString([]byte("\xff\xfe" + fetch + "\xfb"))},
		"base64 of user:pass":           {"AUTHDATA " + base64.RawStdEncoding.EncodeToString([]byte(userPass))},
		"base64 at an offset in a blob": {"blob " + embedded + " done"},
		"wrapped at 76":                 {"+ base64 kubeconfig\n" + wrap(embedded, 76) + "\n+ done"},
		"wrapped at 64, indented":       {"data:\n    " + strings.ReplaceAll(wrap(b64("xx"+fetch+kubelet), 64), "\n", "\n    ") + "\nexit 1"},
		"in json":                       {`{"p":"` + password + `"}`},
	}
	forms := []string{fetch, kubelet, kubelet[7:], password,
		b64(fetch)[4:40], b64(userPass)[0:12], b64(password)[0:12],
		base64.RawURLEncoding.EncodeToString([]byte("\xff\xfe" + fetch + "\xfb"))[10:40],
		embedded[40:80], embedded[100:140], b64("xx" + fetch + kubelet)[10:50], b64("xx" + fetch + kubelet)[70:110]}
	for name, in := range tails {
		for _, tail := range in {
			got := Scrub(tail, known)
			for _, f := range forms {
				if strings.Contains(got, f) {
					t.Errorf("%s: %q survived in\n%s", name, f, got)
				}
			}
			if !strings.Contains(got, Redacted) {
				t.Errorf("%s: nothing redacted in %q", name, got)
			}
		}
	}
	// Without the known values, the forms no pattern finds survive: the
	// test can fail.
	if got := Scrub("fetched with "+fetch+" ok", nil); !strings.Contains(got, fetch) {
		t.Errorf("a pattern took the fetch token: %q", got)
	}
	// Short values are not scrubbed by value.
	if got := Scrub("user admin logged in", NewKnown("admin")); got != "user admin logged in" {
		t.Errorf("a short value was scrubbed: %q", got)
	}
	// Ordinary output stays with known values too.
	tail := strings.Join(ordinaryLines, "\n")
	if got := Scrub(tail, known); got != tail {
		t.Errorf("an ordinary tail changed:\n%s", got)
	}
}
