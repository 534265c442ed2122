package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"
)

// testNamespace holds the test's MachineDeployments and pods.
const testNamespace = "node-test"

var ospResource = schema.GroupVersionResource{Group: "operatingsystemmanager.k8c.io", Version: "v1alpha1", Resource: "operatingsystemprofiles"}

// startCluster starts the local cluster as test/e2e does, plus what nodes
// need: kube-controller-manager, kube-apiserver's certificate valid for the
// guest address, cluster-info telling nodes to dial it, and osm-apiserver
// pointing containerd at the test's registry.
func startCluster(ctx context.Context) error {
	bin := filepath.Join(env.dir, "bin", "osm-apiserver")
	if err := testenv.Command(ctx, env.repo, nil, "go", "build", "-o", bin, "./cmd/osm-apiserver"); err != nil {
		return fmt.Errorf("failed to build osm-apiserver: %w", err)
	}
	// kube-apiserver reaches the VMs' kubelets through the test's egress proxy.
	egressFlag, err := startEgress(filepath.Join(env.dir, "egress"))
	if err != nil {
		return err
	}
	k := env.kit
	serverArgs := []string{
		"--node-containerd-registry-mirrors", fmt.Sprintf("%s=http://%s:%d", mirroredRegistry, k.guestAddr, k.ports.registry),
		"--pause-image", pauseImage,
	}
	harness := []string{
		"OSM_CLUSTER_DIR=" + env.dir,
		"OSM_APISERVER_BIN=" + bin,
		"OSM_APISERVER_ARGS=" + strings.Join(serverArgs, " "),
		fmt.Sprintf("OSM_CLUSTER_WATCH_PID=%d", os.Getpid()),
		"OSM_KUBE_APISERVER_SANS=IP:" + k.guestAddr,
		fmt.Sprintf("OSM_CLUSTER_INFO_SERVER=https://%s:%d", k.guestAddr, k.ports.apiserver),
		"OSM_CONTROLLER_MANAGER=1",
		"OSM_KUBE_APISERVER_ARGS=" + egressFlag,
	}
	env.harness = harness
	if err := testenv.Command(ctx, env.repo, harness, "hack/local-cluster.sh", "up"); err != nil {
		return err
	}
	vars, err := testenv.ReadShellEnv(filepath.Join(env.dir, "env"))
	if err != nil {
		return err
	}
	if env.config, err = clientcmd.BuildConfigFromFlags("", vars["KUBECONFIG"]); err != nil {
		return err
	}
	env.kubePort = vars["KUBE_PORT"]
	if env.kube, err = kubernetes.NewForConfig(env.config); err != nil {
		return err
	}
	if env.osm, err = osmclient.NewForConfig(env.config); err != nil {
		return err
	}
	if env.dynamic, err = dynamic.NewForConfig(env.config); err != nil {
		return err
	}
	return prepareNamespace(ctx)
}

// prepareNamespace creates the test namespace and waits for what pods need:
// osm-apiserver's default osp-ubuntu and the namespace's default ServiceAccount
// (kube-controller-manager creates it).
func prepareNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}}
	if _, err := env.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return waitFor(ctx, "osp-ubuntu and the default ServiceAccount of "+testNamespace, time.Minute, func() (string, error) {
		if _, err := env.dynamic.Resource(ospResource).Namespace("kube-system").Get(ctx, "osp-ubuntu", metav1.GetOptions{}); err != nil {
			return "osp-ubuntu not installed yet", nil
		}
		if _, err := env.kube.CoreV1().ServiceAccounts(testNamespace).Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return "no default ServiceAccount yet", nil
		}
		return "", nil
	})
}

func stopCluster() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := testenv.Command(ctx, env.repo, []string{"OSM_CLUSTER_DIR=" + env.dir}, "hack/local-cluster.sh", "down"); err != nil {
		fmt.Fprintf(os.Stderr, "node-test: tear-down: %v\n", err)
	}
}

// dumpClusterLogs prints the end of the cluster's logs.
func dumpClusterLogs() {
	if env.dir == "" {
		return
	}
	for _, name := range []string{"kube-apiserver", "kube-controller-manager", "osm-apiserver-stopped", "osm-apiserver"} {
		path := filepath.Join(env.dir, "run", name+".log")
		if _, err := os.Stat(path); err != nil && name == "osm-apiserver-stopped" {
			continue // osm-apiserver was not restarted
		}
		fmt.Fprintf(os.Stderr, "----- last lines of %s -----\n%s\n", path, testenv.TailFile(path, 40))
	}
}
