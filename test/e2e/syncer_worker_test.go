package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestSyncerManagementWorkerMode runs a second kube-apiserver (the harness's
// script, in a directory of its own) as the worker cluster: MachineDeployments,
// Secrets, tokens and RBAC live there, profiles in the test cluster.
func TestSyncerManagementWorkerMode(t *testing.T) {
	worker, workerKubeconfig, workerKube, workerDyn := startWorkerCluster(t)
	ns := "syncer-worker"
	if _, err := workerKube.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	osp := "e2e-syncer-worker-" + fmt.Sprint(time.Now().UnixNano()%1_000_000)
	applyProfile(t, e2eProfile(t, osp, "v1.0.0")) // In the management (test) cluster.
	startSyncerOn(t, "worker", workerKubeconfig, nil)

	md := syncerMD(ns, "alpha", osp, "1")
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(md)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := workerDyn.Resource(mdResource).Namespace(ns).Create(context.Background(),
		&unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("alpha-%s-bootstrap-config", ns)
	eventually(t, time.Minute, func() error {
		s, err := workerKube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return annotated("1", "v1.0.0")(s)
	})
	// The fetch token in the payload works against the worker's kube-apiserver.
	bootstrap, err := workerKube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fetcher, err := kubernetes.NewForConfig(&rest.Config{Host: worker.Host, BearerToken: fetchToken(t, bootstrap),
		TLSClientConfig: rest.TLSClientConfig{CAData: worker.CAData, CAFile: worker.CAFile}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fetcher.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(context.Background(),
		fmt.Sprintf("alpha-%s-provisioning-config", ns), metav1.GetOptions{}); err != nil {
		t.Errorf("fetch token against the worker cluster: %v", err)
	}
	if _, err := env.kube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("payload secret in the management cluster: %v, want NotFound", err)
	}
	// A new profile version in the management cluster re-renders in the worker.
	applyProfile(t, e2eProfile(t, osp, "v2.0.0"))
	eventually(t, time.Minute, func() error {
		s, err := workerKube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return annotated("1", "v2.0.0")(s)
	})
}

// startWorkerCluster starts etcd and kube-apiserver with hack/local-cluster.sh
// in a directory of its own and stops them when the test ends.
func startWorkerCluster(t *testing.T) (cfg *rest.Config, kubeconfig string, kube kubernetes.Interface, dyn dynamic.Interface) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "worker")
	harness := []string{"OSM_CLUSTER_DIR=" + dir, fmt.Sprintf("OSM_CLUSTER_WATCH_PID=%d", os.Getpid())}
	if err := command(3*time.Minute, env.repo, harness, "hack/local-cluster.sh", "cluster"); err != nil {
		t.Fatalf("second cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := command(time.Minute, env.repo, harness[:1], "hack/local-cluster.sh", "down"); err != nil {
			t.Errorf("second cluster down: %v", err)
		}
	})
	vars, err := readEnvFile(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig = vars["KUBECONFIG"]
	cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	if kube, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if dyn, err = dynamic.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	return cfg, kubeconfig, kube, dyn
}
