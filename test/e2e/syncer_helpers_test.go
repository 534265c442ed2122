package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	ospinformers "github.com/osm-apiserver/osm-apiserver/pkg/generated/informers/externalversions"
	"github.com/osm-apiserver/osm-apiserver/pkg/inputs"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinedeployments"
	"github.com/osm-apiserver/osm-apiserver/pkg/options"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/rendercache"
	"github.com/osm-apiserver/osm-apiserver/pkg/syncer"
)

// syncerLease is the Lease of the syncers the tests start in-process: not the
// one of the harness's osm-apiserver, so both can run.
const syncerLease = "e2e-syncer"

// syncerReplica is one in-process syncer, wired as serve.go wires it: its own
// informers, the API's resolver and render cache, leader-elected.
type syncerReplica struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// stop ends the replica and waits for it, as a killed process would stop
// writing (without releasing its Lease gracefully if hard is set).
func (r *syncerReplica) stop() {
	r.cancel()
	<-r.done
}

// startSyncer runs a syncer replica with identity id until the test ends.
func startSyncer(t testing.TB, id string, mutate func(*syncer.Config)) *syncerReplica {
	t.Helper()
	return startSyncerOn(t, id, env.config, env.kube, mutate)
}

// startSyncerOn runs a syncer replica whose MachineDeployments, Secrets, tokens
// and RBAC live in the worker cluster; profiles and the Lease stay in the
// test cluster (management/worker mode).
func startSyncerOn(t testing.TB, id string, worker *rest.Config, workerKube kubernetes.Interface, mutate func(*syncer.Config)) *syncerReplica {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	lw, err := machinedeployments.NewListWatch(worker)
	if err != nil {
		t.Fatal(err)
	}
	mds := machinedeployments.NewInformerFor(lw, 0)
	ospFactory := ospinformers.NewSharedInformerFactory(env.osm, 0)
	osps := ospFactory.Operatingsystemmanager().V1alpha1().OperatingSystemProfiles()
	secrets := syncer.NewSecretInformers(workerKube, 0)
	cluster, err := inputs.ClusterInfo(ctx, &options.ClusterFlags{}, workerKube, worker)
	if err != nil {
		t.Fatal(err)
	}
	node, err := options.NewNodeFlags().NodeOptions()
	if err != nil {
		t.Fatal(err)
	}
	resolver, err := inputs.New(inputs.Config{
		Namespace:   "kube-system",
		Profiles:    osps.Lister(),
		Cluster:     cluster,
		Node:        node,
		Credentials: syncer.NewCredentialSource(secrets),
		Renderer:    render.NewRenderer(),
		Cache:       rendercache.New(0),
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := syncer.Config{
		Client:             workerKube,
		MachineDeployments: mds,
		Profiles:           osps.Informer(),
		Secrets:            secrets,
		Renderer:           resolver,
		Cluster:            syncer.StaticCluster(cluster),
		ProfileNamespace:   "kube-system",
		Workers:            8,
		ResyncPeriod:       time.Minute,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	le := syncer.LeaderElection{
		Enabled: true, Client: env.kube, Namespace: "kube-system", Name: syncerLease, Identity: id,
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond,
	}
	ospFactory.Start(ctx.Done())
	secrets.Start(ctx.Done())
	go mds.RunWithContext(ctx)
	r := &syncerReplica{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		if err := syncer.Run(ctx, le, nil, cfg); err != nil {
			t.Errorf("syncer %s: %v", id, err)
		}
	}()
	t.Cleanup(r.stop)
	return r
}

// syncerNamespace creates a fresh namespace for one test's MachineDeployments.
// Namespaces stay Terminating without kube-controller-manager, so it is not
// deleted; its MachineDeployments are.
func syncerNamespace(t testing.TB) string {
	t.Helper()
	ns := fmt.Sprintf("syncer-%d", time.Now().UnixNano()%1_000_000_000)
	_, err := env.kube.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns
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
			render.AnnotationOSP: osp, render.AnnotationMDRevision: revision,
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
	var s *corev1.Secret
	eventually(t, time.Minute, func() error {
		var err error
		s, err = env.kube.CoreV1().Secrets(render.CloudInitSettingsNamespace).Get(context.Background(),
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
		if got := s.Annotations[render.AnnotationSecretMDRevision]; got != revision {
			return fmt.Errorf("%s: revision %q, want %q", s.Name, got, revision)
		}
		if got := s.Annotations[render.AnnotationSecretOSPVersion]; got != ospVersion {
			return fmt.Errorf("%s: osp version %q, want %q", s.Name, got, ospVersion)
		}
		if s.Annotations[render.AnnotationSecretMDAnnotationsHash] == "" {
			return fmt.Errorf("%s: no annotations hash", s.Name)
		}
		return nil
	}
}
