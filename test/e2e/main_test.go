package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"
)

// env is the cluster every test talks to; TestMain sets it up once.
var env struct {
	repo       string
	dir        string // the harness's state dir: a temp dir, or the reused cluster's
	reused     bool   // OSM_E2E_REUSE_CLUSTER: leave the cluster running
	osmAddr    string // osm-apiserver's address, for what kube-apiserver does not proxy
	pki        string // the harness's certificates
	kubeconfig string
	kubectl    string
	binDir     string // kube-apiserver, kube-controller-manager, ... of the cluster
	config     *rest.Config
	kube       kubernetes.Interface
	osm        osmclient.Interface
	dynamic    dynamic.Interface
}

// testNamespace holds the MachineDeployments of testdata/machinedeployments.yaml.
const testNamespace = "e2e"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	start := time.Now()
	if err := setUp(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: set-up failed after %s: %v\n", time.Since(start).Round(time.Millisecond), err)
		dumpLogs()
		tearDown()
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: cluster, osm-apiserver and fixtures ready in %s\n", time.Since(start).Round(time.Millisecond))
	code := m.Run()
	if code != 0 {
		dumpLogs()
	}
	tearDown()
	return code
}

func setUp() error {
	repo, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	env.repo = repo
	if dir := os.Getenv("OSM_E2E_REUSE_CLUSTER"); dir != "" {
		// For quick iterations: a cluster started with hack/local-cluster.sh up
		// (OSM_APISERVER_ARGS as serverArgs), kept after the tests.
		return reuseCluster(dir)
	}
	env.dir, err = os.MkdirTemp("", "osm-e2e-")
	if err != nil {
		return err
	}
	// Everything lives in the harness's state dir, so that its watchdog, which runs
	// `down` when this process dies, leaves nothing behind.
	bin := filepath.Join(env.dir, "bin", "osm-apiserver")
	if err := command(5*time.Minute, env.repo, nil, "go", "build", "-o", bin, "./cmd/osm-apiserver"); err != nil {
		return fmt.Errorf("failed to build osm-apiserver: %w", err)
	}
	harness := []string{
		"OSM_CLUSTER_DIR=" + env.dir,
		"OSM_APISERVER_BIN=" + bin,
		"OSM_APISERVER_ARGS=" + strings.Join(serverArgs(), " "),
		// A killed test binary must not leave etcd and kube-apiserver behind.
		fmt.Sprintf("OSM_CLUSTER_WATCH_PID=%d", os.Getpid()),
	}
	// The first run builds the cluster binaries (docs/benchmarks.md, First run).
	if err := command(30*time.Minute, env.repo, harness, "hack/local-cluster.sh", "up"); err != nil {
		return err
	}
	return useCluster(env.dir)
}

func reuseCluster(dir string) error {
	env.dir = dir
	env.reused = true
	return useCluster(dir)
}

// useCluster connects to the cluster of the harness's state dir and installs the fixtures.
func useCluster(dir string) error {
	vars, err := readEnvFile(filepath.Join(dir, "env"))
	if err != nil {
		return err
	}
	env.kubeconfig, env.kubectl, env.binDir = vars["KUBECONFIG"], vars["KUBECTL"], vars["BIN_DIR"]
	env.osmAddr = "127.0.0.1:" + vars["OSM_PORT"]
	env.pki = filepath.Join(dir, "pki")
	if err := newClients(); err != nil {
		return err
	}
	return installFixtures()
}

// serverArgs are the osm-apiserver flags of the tests, beyond what the harness sets:
// none, the tests run it as deployed.
func serverArgs() []string {
	return nil
}

func newClients() error {
	var err error
	env.config, err = clientcmd.BuildConfigFromFlags("", env.kubeconfig)
	if err != nil {
		return err
	}
	env.config.QPS, env.config.Burst = 200, 400
	if env.kube, err = kubernetes.NewForConfig(env.config); err != nil {
		return err
	}
	if env.osm, err = osmclient.NewForConfig(env.config); err != nil {
		return err
	}
	env.dynamic, err = dynamic.NewForConfig(env.config)
	return err
}

// installFixtures applies testdata/ and waits until osm-apiserver serves an OSC for
// every MachineDeployment, rendered unless its OSP is broken.
func installFixtures() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := kubectlCtx(ctx, "get", "namespace", testNamespace); err != nil {
		if _, err := kubectlCtx(ctx, "create", "namespace", testNamespace); err != nil {
			return err
		}
	}
	if _, err := kubectlCtx(ctx, "apply", "--server-side", "-f", filepath.Join(env.repo, "test/e2e/testdata")); err != nil {
		return err
	}
	return poll(ctx, time.Minute, func() error {
		list, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(testNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(list.Items) != 5 {
			return fmt.Errorf("%d OperatingSystemConfigs in %s, want 5", len(list.Items), testNamespace)
		}
		// A new MD renders once the syncer has created its tokens.
		for _, osc := range list.Items {
			if osc.Status.Pending != "" {
				return fmt.Errorf("%s: pending: %s", osc.Name, osc.Status.Pending)
			}
			if !strings.HasPrefix(osc.Name, "e2e-broken-") && osc.Status.RenderError != "" {
				return fmt.Errorf("%s: %s", osc.Name, osc.Status.RenderError)
			}
		}
		return nil
	})
}

func tearDown() {
	if env.dir == "" || env.reused {
		return
	}
	harness := []string{"OSM_CLUSTER_DIR=" + env.dir}
	if err := command(time.Minute, env.repo, harness, "hack/local-cluster.sh", "down"); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: tear-down: %v\n", err)
	}
	if err := os.RemoveAll(env.dir); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: tear-down: %v\n", err)
	}
}
