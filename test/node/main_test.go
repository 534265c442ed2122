// Package node boots real node VMs against a local cluster (`make node-test`,
// docs/node-test.md): the default osp-ubuntu's payloads, written by the
// syncer, must turn a Debian 12 VM into a Ready node that runs a pod, with
// every download served locally.
//
// TestMain starts everything the VMs talk to: the local cluster with
// kube-controller-manager (hack/local-cluster.sh), osm-apiserver as test/e2e
// runs it, the mirror over the kit's files and a registry with locally built
// images. Each boot prints one summary line at the end.
package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"
	"github.com/osm-apiserver/osm-apiserver/test/node/nodevm"
)

// env is what every boot uses; TestMain sets it up once.
var env struct {
	repo    string
	dir     string          // the cluster's state dir, VM dirs below it
	kit     *kit            // debian-12's: the guest addresses and versions every kit shares
	kits    map[string]*kit // by image
	accel   string
	servers *servers
	// kubePort is kube-apiserver's port on 127.0.0.1, forwarded to the guests.
	kubePort string
	// harness is hack/local-cluster.sh's environment, to start osm-apiserver
	// again as it was started (osmrestart_test.go).
	harness []string
	config  *rest.Config
	kube    kubernetes.Interface
	osm     osmclient.Interface
	dynamic dynamic.Interface
}

// summary collects one line per boot, printed last.
var summary struct {
	sync.Mutex
	lines []string
}

func report(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	summary.Lock()
	summary.lines = append(summary.lines, line)
	summary.Unlock()
	fmt.Println(line)
}

// progress prints what a long step does, as it happens.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "node-test: %s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	err := setUp(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "node-test: set-up failed after %s: %v\n", time.Since(start).Round(time.Second), err)
		dumpClusterLogs()
		for _, b := range boots {
			report("%s: FAILED: set-up: %v", b.label(), err)
		}
		tearDown()
		return 1
	}
	progress("cluster, kube-controller-manager, osm-apiserver, mirror and registry ready in %s", time.Since(start).Round(time.Second))
	code := m.Run()
	if code != 0 {
		dumpClusterLogs()
	}
	tearDown()
	summary.Lock()
	fmt.Printf("\n%s\n", strings.Join(summary.lines, "\n"))
	summary.Unlock()
	return code
}

func setUp(ctx context.Context) error {
	repo, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	env.repo = repo
	env.kits = map[string]*kit{}
	for _, b := range append([]boot{{image: "debian-12"}}, boots...) {
		if env.kits[b.image] != nil {
			continue
		}
		if env.kits[b.image], err = loadKit(ctx, env.repo, b.image); err != nil {
			return err
		}
	}
	env.kit = env.kits["debian-12"]
	for image, k := range env.kits {
		if k.kubeVersion != env.kit.kubeVersion || k.guestAddr != env.kit.guestAddr || k.ports != env.kit.ports {
			return fmt.Errorf("the %s kit %s and the debian-12 kit %s differ in versions or guest addresses", image, k.dir, env.kit.dir)
		}
	}
	accel, reason, err := nodevm.DetectAccel(os.Getenv("OSM_NODE_TEST_ACCEL"))
	if err != nil {
		return err
	}
	env.accel = string(accel)
	for image, k := range env.kits {
		progress("%s kit %s", image, k.dir)
	}
	progress("VMs run with %s (%s)", accel, reason)
	if env.dir, err = os.MkdirTemp("", "osm-node-"); err != nil {
		return err
	}
	// The servers come first: their ports are forwarded, and the cluster's
	// osm-apiserver is told the registry mirror.
	if env.servers, err = startServers(filepath.Join(env.dir, "servers")); err != nil {
		return err
	}
	if err := buildAndPushImages(ctx, env.repo, filepath.Join(env.dir, "images"), env.servers.registryAddr); err != nil {
		return err
	}
	return startCluster(ctx)
}

func tearDown() {
	if env.servers != nil {
		env.servers.close()
	}
	if env.dir == "" {
		return
	}
	stopCluster()
	if err := os.RemoveAll(env.dir); err != nil {
		fmt.Fprintf(os.Stderr, "node-test: tear-down: %v\n", err)
	}
}
