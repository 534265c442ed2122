package testenv

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestReadShellEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "env")
	data := "# a comment\nexport KUBECONFIG=\"/tmp/x/kubeconfig\"\nKUBE_VERSION='v1.37.1'\nGUEST_ADDR=10.0.2.100\nEMPTY=\nnot a variable\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	vars, err := ReadShellEnv(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"KUBECONFIG": "/tmp/x/kubeconfig", "KUBE_VERSION": "v1.37.1", "GUEST_ADDR": "10.0.2.100", "EMPTY": ""}
	if len(vars) != len(want) {
		t.Errorf("vars = %q, want %q", vars, want)
	}
	for k, v := range want {
		if got, ok := vars[k]; !ok || got != v {
			t.Errorf("%s = %q (%v), want %q", k, got, ok, v)
		}
	}
}

func TestTailLinesAndRepoRoot(t *testing.T) {
	if got := TailLines("a\nb\nc\n", 2); got != "b\nc" {
		t.Errorf("TailLines = %q, want %q", got, "b\nc")
	}
	if got := TailLines("a", 5); got != "a" {
		t.Errorf("TailLines of a short text = %q", got)
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "hack", "local-cluster.sh")); err != nil {
		t.Errorf("RepoRoot = %s, which has no hack/local-cluster.sh: %v", root, err)
	}
}

func TestFreePortCanBeListenedOn(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("port %d from FreePort: %v", port, err)
	}
	_ = l.Close()
}
