package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/migrate"
)

// upstreamOSM returns ../shared/upstream-osm beside the checkout, which holds
// upstream operating-system-manager's CRDs and profiles.
func upstreamOSM(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(env.repo), "shared", "upstream-osm")
	if _, err := os.Stat(filepath.Join(dir, "deploy", "crd")); err != nil {
		t.Skipf("../shared/upstream-osm is missing beside the repository root (%s): this test builds upstream's state from its CRD and profiles", dir)
	}
	return dir
}

// ourPayloadSecrets are the payload Secrets osm-apiserver writes for the
// MDs of buildUpstreamState: pool-b's profile (upstream's) reads the MD's
// Secrets, the others' nodes post a MachineJoin.
var ourPayloadSecrets = map[string][]string{
	"pool-a": {"bootstrap"},
	"pool-b": {"bootstrap", "provisioning"},
	"pool-c": {"bootstrap"},
}

// TestMigrateFromUpstream builds the state upstream OSM leaves with real
// objects — its OSC CRD and OSCs, its webhook configuration (its server gone:
// it refuses every change of an MD), its finalizer on MDs, its payload
// Secrets, kubelet bootstrap kubeconfigs and tokens, the getter token and its
// RBAC, its osp-ubuntu, its controller's Lease — and takes the cluster over:
// refused while upstream's controller runs, then a dry run that changes
// nothing, --apply, and a second --apply that finds nothing to do.
func TestMigrateFromUpstream(t *testing.T) {
	up := upstreamOSM(t)
	ctx := testContext(t)
	ns := fmt.Sprintf("e2e-migrate-%d", time.Now().UnixNano()%1_000_000_000)
	if _, err := env.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: ns, Labels: map[string]string{"e2e-migrate": "true"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	u := buildUpstreamState(t, up, ns)

	// osm-apiserver runs beside it: it warns, and its syncer takes the Secrets over.
	eventually(t, 30*time.Second, func() error {
		if _, body := get(t, osmHTTPClient(t, false), "/readyz?verbose"); !strings.Contains(body, "[+]upstream-osm: warning: upstream operating-system-manager is still installed") {
			return fmt.Errorf("/readyz?verbose has no warning:\n%s", body)
		}
		return nil
	})
	// pool-a and pool-c join through a MachineJoin: no provisioning Secret of
	// ours; upstream's is deleted by migrate with their node credentials.
	for md, kinds := range ourPayloadSecrets {
		for _, kind := range kinds {
			payloadSecret(t, ns, md, kind, func(s *corev1.Secret) error {
				if owner, ok := machinecontroller.Owner(s); !ok || owner.Name != md {
					return fmt.Errorf("%s is not osm-apiserver's yet", s.Name)
				}
				return nil
			})
		}
	}

	// Both groups have priority 1000 and kubectl takes the first by name:
	// `kubectl get osc` is upstream's.
	if out, err := kubectlFresh(ctx, t, "get", "osc", "-n", "kube-system"); err != nil || !strings.Contains(out, "pool-a-"+ns+"-config") {
		t.Errorf("kubectl get osc -n kube-system before the migration (%v), want upstream's OSCs:\n%s", err, out)
	}

	t.Log("upstream's controller runs: migrate refuses to apply")
	out, err := runMigrate(t, "--apply")
	if err == nil || !strings.Contains(out, "upstream operating-system-manager's controller is running (Lease kube-system/operating-system-manager") {
		t.Fatalf("migrate --apply while upstream runs: %v\n%s", err, out)
	}
	u.stopController(t)

	t.Log("dry run")
	out, err = runMigrate(t)
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	inOrder(t, out,
		"Upstream operating-system-manager left:",
		"ValidatingWebhookConfiguration operatingsystemmanager.k8c.io",
		"Plan:",
		"delete ValidatingWebhookConfiguration operatingsystemmanager.k8c.io",
		fmt.Sprintf("machinedeployment %s/pool-a: its Secrets are osm-apiserver's, revision 3 as the MD's: remove finalizer %s", ns, migrate.Finalizer),
		fmt.Sprintf("machinedeployment %s/pool-d is being deleted: remove finalizer", ns),
		fmt.Sprintf("machinedeployment %s/pool-a: delete upstream's node credentials: Secret cloud-init-settings/%s-pool-a-kubelet-bootstrap-config", ns, ns),
		"delete the getter token",
		"delete upstream's 3 OperatingSystemConfigs",
		"delete CustomResourceDefinition "+migrate.OSCCRD,
		"Not changed by migrate:",
		fmt.Sprintf("OperatingSystemProfile %s/osp-ubuntu (v1.11.2) is not osm-apiserver's: it stays as it is, used by %s/pool-b", ns, ns),
		fmt.Sprintf("machinedeployment %s/pool-c names no profile", ns),
	)
	if _, err := env.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, u.webhook, metav1.GetOptions{}); err != nil {
		t.Errorf("the dry run changed something: %v", err)
	}
	t.Log(out)

	t.Log("--apply")
	out, err = runMigrate(t, "--apply")
	if err != nil || !strings.Contains(out, "Done.") {
		t.Fatalf("migrate --apply: %v\n%s", err, out)
	}
	t.Log(out)
	u.checkTakenOver(t, ns)

	t.Log("--apply again: nothing to do")
	out, err = runMigrate(t, "--apply")
	if err != nil || !strings.Contains(out, "Upstream operating-system-manager: nothing of it is left.") || !strings.Contains(out, "Nothing to do.") {
		t.Errorf("second migrate --apply: %v\n%s", err, out)
	}
}

// inOrder checks that out holds each of want, in this order.
func inOrder(t *testing.T, out string, want ...string) {
	t.Helper()
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("output lacks %q after the lines before it:\n%s", w, out)
		}
		rest = rest[i+len(w):]
	}
}

// runMigrate runs `osm-apiserver migrate` against the test cluster.
func runMigrate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, osmBinary(t), append([]string{"migrate", "--kubeconfig", env.kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// osmBinary is the osm-apiserver the harness runs (a reused cluster's may be
// elsewhere: then one built for the test).
func osmBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(env.dir, "bin", "osm-apiserver")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	bin = filepath.Join(t.TempDir(), "osm-apiserver")
	if err := command(5*time.Minute, env.repo, nil, "go", "build", "-o", bin, "./cmd/osm-apiserver"); err != nil {
		t.Fatal(err)
	}
	return bin
}

// upstreamState is what buildUpstreamState made.
type upstreamState struct {
	webhook     string
	getterToken string
	lease       string
}

// stopController makes upstream's controller Lease an hour old, as after its
// Deployment was scaled to 0.
func (u *upstreamState) stopController(t *testing.T) {
	t.Helper()
	leases := env.kube.CoordinationV1().Leases("kube-system")
	lease, err := leases.Get(context.Background(), u.lease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hourAgo := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	lease.Spec.RenewTime = &hourAgo
	if _, err := leases.Update(context.Background(), lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// checkTakenOver checks the cluster after migrate --apply.
func (u *upstreamState) checkTakenOver(t *testing.T, ns string) {
	t.Helper()
	ctx := testContext(t)
	settings := machinecontroller.CloudInitSettingsNamespace
	// The Secrets are osm-apiserver's, what its API serves, with the revision
	// upstream wrote: machine-controller recreates no Machine.
	for md, kinds := range ourPayloadSecrets {
		if len(kinds) == 1 {
			// A MachineJoin MD: upstream's provisioning Secret went.
			_, err := env.kube.CoreV1().Secrets(settings).Get(ctx, fmt.Sprintf("%s-%s-provisioning-config", md, ns), metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("upstream's provisioning Secret of %s, whose nodes post a MachineJoin: %v, want it deleted", md, err)
			}
		}
		for _, kind := range kinds {
			s, err := env.kube.CoreV1().Secrets(settings).Get(ctx, fmt.Sprintf("%s-%s-%s-config", md, ns, kind), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if rev := s.Annotations[machinecontroller.AnnotationSecretMDRevision]; rev != "3" {
				t.Errorf("%s: revision %q, want upstream's 3", s.Name, rev)
			}
			payload, err := env.osm.OsmV1alpha1().ProvisioningPayloads(ns).Get(ctx, md+"-"+kind, getOptions())
			if err != nil {
				t.Fatal(err)
			}
			if got := string(s.Data[machinecontroller.SecretDataKey]); got != payload.Spec.UserData || strings.Contains(got, "upstream's") {
				t.Errorf("%s holds other user-data than osm-apiserver serves", s.Name)
			}
		}
	}
	// Nothing blocks deleting an MD any more.
	for _, md := range []string{"pool-a", "pool-d"} {
		_ = env.dynamic.Resource(mdResource).Namespace(ns).Delete(ctx, md, metav1.DeleteOptions{})
		eventually(t, 30*time.Second, func() error {
			_, err := env.dynamic.Resource(mdResource).Namespace(ns).Get(ctx, md, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				return nil
			case err != nil:
				return err
			}
			return fmt.Errorf("machinedeployment %s/%s: still there after delete", ns, md)
		})
	}
	// `kubectl get osc` is osm-apiserver's: a kubectl without cached discovery.
	out, err := kubectlFresh(ctx, t, "get", "osc", "-A")
	if err != nil || !strings.Contains(out, "PROFILE") || !strings.Contains(rowOf(strings.Split(out, "\n"), "pool-c"), "(default)") {
		t.Errorf("kubectl get osc -A (%v):\n%s", err, out)
	}
	// The getter token no longer authenticates (kube-apiserver caches a
	// token's authentication for 10 s).
	eventually(t, 30*time.Second, func() error { return revoked(t, u.getterToken) })
	for what, get := range map[string]func() error{
		"webhook configuration": func() error {
			_, err := env.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, u.webhook, metav1.GetOptions{})
			return err
		},
		"getter RoleBinding": func() error {
			_, err := env.kube.RbacV1().RoleBindings(settings).Get(ctx, migrate.GetterName, metav1.GetOptions{})
			return err
		},
		"kubelet bootstrap kubeconfig": func() error {
			_, err := env.kube.CoreV1().Secrets(settings).Get(ctx, ns+"-pool-b-kubelet-bootstrap-config", metav1.GetOptions{})
			return err
		},
	} {
		if err := get(); !apierrors.IsNotFound(err) {
			t.Errorf("upstream's %s: %v, want it gone", what, err)
		}
	}
	eventually(t, 30*time.Second, func() error {
		if _, body := get(t, osmHTTPClient(t, false), "/readyz?verbose"); !strings.Contains(body, "[+]upstream-osm ok") {
			return fmt.Errorf("/readyz?verbose still warns:\n%s", body)
		}
		return nil
	})
}

// kubectlFresh runs kubectl with a discovery cache of its own.
func kubectlFresh(ctx context.Context, t *testing.T, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, env.kubectl, append([]string{"--kubeconfig", env.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}
