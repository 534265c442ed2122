package e2e

import (
	"net"

	genericoptions "k8s.io/apiserver/pkg/server/options"

	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/osm-apiserver/osm-apiserver/cmd/osm-apiserver/app/options"
	"github.com/osm-apiserver/osm-apiserver/pkg/server"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
)

// syncerLease is the Lease of the servers the tests start in-process: not the
// one of the harness's osm-apiserver, so both can sync.
const syncerLease = "e2e-syncer"

// syncerReplica is one in-process osm-apiserver, API and syncer, built by
// the same constructor as the binary (flags → Config → New), whose syncer
// stands for election on syncerLease.
type syncerReplica struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// stop ends the replica and waits for it, as a killed process would stop
// writing.
func (r *syncerReplica) stop() {
	r.cancel()
	<-r.done
}

// startSyncer runs a replica with identity id until the test ends.
func startSyncer(t testing.TB, id string, mutate func(*server.Config)) *syncerReplica {
	t.Helper()
	return startSyncerOn(t, id, "", mutate)
}

// startSyncerOn runs a replica whose MachineDeployments, Secrets, tokens and
// RBAC live in the worker cluster of workerKubeconfig ("" for the test
// cluster); profiles and the Lease stay in the test cluster
// (management/worker mode).
func startSyncerOn(t testing.TB, id, workerKubeconfig string, mutate func(*server.Config)) *syncerReplica {
	t.Helper()
	o := options.NewOptions()
	o.Kubeconfig, o.WorkerClusterKubeconfig = env.kubeconfig, workerKubeconfig
	listener, port, err := genericoptions.CreateListener("tcp", "127.0.0.1:0", net.ListenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	o.SecureServing.BindAddress, o.SecureServing.BindPort, o.SecureServing.Listener = net.ParseIP("127.0.0.1"), port, listener
	o.SecureServing.ServerCert.CertDirectory = t.TempDir()
	// Not the harness's APIService: a certificate of its own, written nowhere.
	o.ServingCert.Mode = options.ServingCertSelfSigned
	o.Syncer.InstallDefaultOSPs = false
	o.Syncer.Workers, o.Syncer.ResyncPeriod = 8, time.Minute
	le := &o.Syncer.LeaderElection
	le.ResourceName = syncerLease
	le.LeaseDuration.Duration, le.RenewDeadline.Duration, le.RetryPeriod.Duration = 4*time.Second, 3*time.Second, 500*time.Millisecond
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg, err := o.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.LeaderElection.Identity = id
	if mutate != nil {
		mutate(cfg)
	}
	srv, err := cfg.Complete().New()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &syncerReplica{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		if err := srv.Run(ctx); err != nil {
			t.Errorf("replica %s: %v", id, err)
		}
	}()
	t.Cleanup(r.stop)
	return r
}

// startSyncerWithMD is the start many syncer tests share: a namespace of their
// own, profile e2e-syncer-<namespace> at v1.0.0, the test's one syncer and
// MachineDeployment "alpha" on the profile. It returns the namespace and the
// profile's name.
func startSyncerWithMD(t testing.TB) (ns, osp string) {
	t.Helper()
	ns = syncerNamespace(t)
	osp = "e2e-syncer-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	startSyncer(t, "only", nil)
	createMD(t, syncerMD(ns, "alpha", osp, "1"))
	return ns, osp
}

// syncerNamespace creates a fresh namespace for one test's MachineDeployments.
// Namespaces stay Terminating without kube-controller-manager, so it is not
// deleted; its MachineDeployments are.
func syncerNamespace(t testing.TB) string {
	t.Helper()
	return createNamespace(t, fmt.Sprintf("syncer-%d", time.Now().UnixNano()%1_000_000_000))
}

// createNamespace creates namespace name for one test. Namespaces stay
// Terminating without kube-controller-manager, so it is not deleted.
func createNamespace(t testing.TB, name string) string {
	t.Helper()
	_, err := env.kube.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// e2eProfile returns testdata's e2e-ubuntu profile renamed to name at version.
func e2eProfile(t testing.TB, name, version string) *ospv1alpha1.OperatingSystemProfile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(env.repo, "test/e2e/testdata/osp-e2e-ubuntu.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var osp ospv1alpha1.OperatingSystemProfile
	if err := yaml.Unmarshal(data, &osp); err != nil {
		t.Fatal(err)
	}
	osp.Name, osp.Spec.Version = name, version
	return &osp
}

// applyProfile creates or updates osp (an update needs a new version).
func applyProfile(t testing.TB, osp *ospv1alpha1.OperatingSystemProfile) {
	t.Helper()
	ctx := context.Background()
	profiles := env.osm.OperatingsystemmanagerV1alpha1().OperatingSystemProfiles(osp.Namespace)
	got, err := profiles.Get(ctx, osp.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = profiles.Create(ctx, osp, metav1.CreateOptions{})
	} else if err == nil {
		osp.ResourceVersion = got.ResourceVersion
		_, err = profiles.Update(ctx, osp, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatalf("profile %s: %v", osp.Name, err)
	}
	t.Cleanup(func() { _ = profiles.Delete(context.Background(), osp.Name, metav1.DeleteOptions{}) })
}

// syncerMD returns an MD like testdata's e2e-ubuntu-aws, using profile osp.
func syncerMD(namespace, name, osp, revision string) *clusterv1alpha1.MachineDeployment {
	md := &clusterv1alpha1.MachineDeployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "MachineDeployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: map[string]string{
			machinecontroller.AnnotationOSP: osp, machinecontroller.AnnotationMDRevision: revision,
		}},
	}
	md.Spec.Selector.MatchLabels = map[string]string{"machine": name}
	md.Spec.Template.Labels = map[string]string{"machine": name}
	md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(`{"cloudProvider":"aws","cloudProviderSpec":{},` +
		`"operatingSystem":"ubuntu","operatingSystemSpec":{"distUpgradeOnBoot":false},"sshPublicKeys":["ssh-ed25519 AAAA e2e@osm"]}`)}
	md.Spec.Template.Spec.Versions.Kubelet = "1.33.4"
	return md
}

// createMD creates md through the dynamic client (there is no typed one).
func createMD(t testing.TB, md *clusterv1alpha1.MachineDeployment) {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(md)
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.dynamic.Resource(mdResource).Namespace(md.Namespace).Create(context.Background(),
		&unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("machine deployment %s/%s: %v", md.Namespace, md.Name, err)
	}
	t.Cleanup(func() {
		err := env.dynamic.Resource(mdResource).Namespace(md.Namespace).Delete(context.Background(), md.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("machine deployment %s/%s: %v", md.Namespace, md.Name, err)
		}
	})
}

// annotateMD sets one annotation of an MD.
func annotateMD(t testing.TB, namespace, name, key, value string) {
	t.Helper()
	kubectl(t, "-n", namespace, "annotate", "--overwrite", "machinedeployments.cluster.k8s.io/"+name, key+"="+value)
}

// payloadSecret waits for MD namespace/name's payload Secret of kind whose
// annotations satisfy ok, and returns it.
func payloadSecret(t testing.TB, namespace, name string, kind string, ok func(*corev1.Secret) error) *corev1.Secret {
	t.Helper()
	return payloadSecretIn(t, env.kube, namespace, name, kind, ok)
}

// payloadSecretIn is payloadSecret in the cluster of kube.
func payloadSecretIn(t testing.TB, kube kubernetes.Interface, namespace, name string, kind string, ok func(*corev1.Secret) error) *corev1.Secret {
	t.Helper()
	var s *corev1.Secret
	eventually(t, time.Minute, func() error {
		var err error
		s, err = kube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(context.Background(),
			fmt.Sprintf("%s-%s-%s-config", name, namespace, kind), metav1.GetOptions{})
		if err != nil {
			return err
		}
		return ok(s)
	})
	return s
}

// annotated checks the contract annotations of a payload Secret.
func annotated(revision, ospVersion string) func(*corev1.Secret) error {
	return func(s *corev1.Secret) error {
		if got := s.Annotations[machinecontroller.AnnotationSecretMDRevision]; got != revision {
			return fmt.Errorf("%s: revision %q, want %q", s.Name, got, revision)
		}
		if got := s.Annotations[machinecontroller.AnnotationSecretOSPVersion]; got != ospVersion {
			return fmt.Errorf("%s: osp version %q, want %q", s.Name, got, ospVersion)
		}
		if s.Annotations[machinecontroller.AnnotationSecretMDAnnotationsHash] == "" {
			return fmt.Errorf("%s: no annotations hash", s.Name)
		}
		return nil
	}
}
