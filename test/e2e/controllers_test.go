package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"
)

// startNamespaceController runs kube-controller-manager's namespace controller
// until the test ends: the local cluster runs no controllers, so a deleted
// namespace would stay Terminating with everything in it.
func startNamespaceController(t *testing.T) {
	startControllerManager(t, "namespace-controller")
}

// startControllerManager runs kube-controller-manager with the given
// controllers until the test ends, building it first if this machine has not
// yet (`make demo` builds only what the demo runs; make test-e2e builds it
// before the tests).
func startControllerManager(t *testing.T, controllers ...string) {
	t.Helper()
	dir := env.binDir
	if _, err := os.Stat(filepath.Join(dir, "kube-controller-manager")); err != nil {
		t.Log("building kube-controller-manager (hack/build-cluster-binaries.sh; once per version, times in docs/benchmarks.md)")
		out, err := exec.Command(filepath.Join(env.repo, "hack/build-cluster-binaries.sh"), "kube-controller-manager").Output()
		if err != nil {
			t.Fatalf("failed to build kube-controller-manager: %v", err)
		}
		dir = strings.TrimSpace(string(out))
	}
	log, err := os.Create(filepath.Join(t.TempDir(), "kube-controller-manager.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, "kube-controller-manager"), "--kubeconfig", env.kubeconfig,
		"--controllers", strings.Join(controllers, ","), "--leader-elect=false", "--secure-port=0",
		// The service-account-token controller signs the tokens of legacy token Secrets.
		"--service-account-private-key-file", filepath.Join(env.pki, "sa.key"),
		"--root-ca-file", filepath.Join(env.pki, "ca.crt"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("kube-controller-manager (%s, started %s before the end):\n%s", strings.Join(controllers, ","),
				time.Since(start).Round(time.Second), testenv.TailFile(log.Name(), 40))
		}
		_ = log.Close()
	})
}
