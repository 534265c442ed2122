package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// ownedBy checks that a payload Secret belongs to MD namespace/name.
func ownedBy(namespace, name string) func(*corev1.Secret) error {
	return func(s *corev1.Secret) error {
		if owner, ok := machinecontroller.Owner(s); !ok || owner != (machinecontroller.Ref{Namespace: namespace, Name: name}) {
			return fmt.Errorf("%s belongs to %v, want %s/%s", s.Name, owner, namespace, name)
		}
		return nil
	}
}

// secretNodeInfo is what the e2e profile's provisioning payload writes to /etc/e2e/node-info.
func secretNodeInfo(t testing.TB, provisioning *corev1.Secret) string {
	t.Helper()
	return strings.TrimSpace(cloudConfigFile(t, string(provisioning.Data[machinecontroller.SecretDataKey]), "/etc/e2e/node-info"))
}

// MD "pool" in "team-<id>" and MD "pool-team" in "<id>": machine-controller
// reads the Secrets of both as pool-team-<id>-{bootstrap,provisioning}-config.
// The first keeps them; the other's OSC and a Warning Event say so; once the
// first goes, the other takes the names over.
func TestConflictingMDsKeepTheirOwnSecrets(t *testing.T) {
	id := fmt.Sprintf("t%d", time.Now().UnixNano()%1_000_000_000)
	teamNS, ns := createNamespace(t, "team-"+id), createNamespace(t, id)
	osp := "e2e-tenancy-" + id
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))

	owner := syncerMD(teamNS, "pool", osp, "1")
	createMD(t, owner)
	payloadSecret(t, teamNS, "pool", "bootstrap", ownedBy(teamNS, "pool"))
	provisioning := payloadSecret(t, teamNS, "pool", "provisioning", ownedBy(teamNS, "pool"))
	if got := secretNodeInfo(t, provisioning); got != "kubelet v1.33.4 on aws" {
		t.Fatalf("owner's node info %q", got)
	}

	other := syncerMD(ns, "pool-team", osp, "1")
	other.Spec.Template.Spec.Versions.Kubelet = "1.33.9"
	createMD(t, other)
	ctx := testContext(t)
	eventually(t, time.Minute, func() error {
		osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).Get(ctx, "pool-team", getOptions())
		if err != nil {
			return err
		}
		if !strings.Contains(osc.Status.RenderError, "conflict") || !strings.Contains(osc.Status.RenderError, "machinedeployment "+teamNS+"/pool has the Secrets") {
			return fmt.Errorf("OSC %s/pool-team: render error %q, want the conflict with %s/pool", ns, osc.Status.RenderError, teamNS)
		}
		return nil
	})
	eventually(t, time.Minute, func() error {
		events, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.name=pool-team,type=Warning,reason=SecretConflict"})
		if err != nil {
			return err
		}
		for _, e := range events.Items {
			if strings.Contains(e.Message, teamNS+"/pool") && strings.Contains(e.Message, ns+"/pool-team") {
				return nil
			}
		}
		return fmt.Errorf("no SecretConflict warning naming both MDs yet (%d events)", len(events.Items))
	})
	if out := kubectl(t, "get", "osc", "-n", ns, "pool-team"); !strings.Contains(out, "Error: conflict") {
		t.Errorf("kubectl get osc does not show the conflict:\n%s", out)
	}
	// The owner's Secrets and OSC are as they were.
	provisioning = payloadSecret(t, teamNS, "pool", "provisioning", ownedBy(teamNS, "pool"))
	if got := secretNodeInfo(t, provisioning); got != "kubelet v1.33.4 on aws" {
		t.Errorf("owner's node info %q after the other MD came: overwritten", got)
	}
	if osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(teamNS).Get(ctx, "pool", getOptions()); err != nil || osc.Status.RenderError != "" {
		t.Errorf("owner's OSC: %v %q", err, osc.Status.RenderError)
	}

	// When the owner goes, the other MD gets the names.
	if err := env.dynamic.Resource(mdResource).Namespace(teamNS).Delete(ctx, "pool", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	payloadSecret(t, ns, "pool-team", "bootstrap", ownedBy(ns, "pool-team"))
	provisioning = payloadSecret(t, ns, "pool-team", "provisioning", ownedBy(ns, "pool-team"))
	if got := secretNodeInfo(t, provisioning); got != "kubelet v1.33.9 on aws" {
		t.Errorf("node info %q after the take-over, want the other MD's", got)
	}
	eventually(t, time.Minute, func() error {
		osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).Get(ctx, "pool-team", getOptions())
		if err != nil {
			return err
		}
		if osc.Status.RenderError != "" || osc.Status.Pending != "" {
			return fmt.Errorf("OSC %s/pool-team: %q %q", ns, osc.Status.RenderError, osc.Status.Pending)
		}
		return nil
	})
}

// MD worker-pool-a in two namespaces long enough that namespace and name
// reach 63 characters: each has its own kubelet bootstrap Secret, and one's
// fetch token cannot read the other's.
func TestLongNamespacesKeepKubeletTokensApart(t *testing.T) {
	id := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000_000)
	pad := strings.Repeat("x", 50-len(id))
	nsA, nsB := createNamespace(t, "a"+pad+id), createNamespace(t, "b"+pad+id)
	osp := "e2e-long-" + id
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	for _, ns := range []string{nsA, nsB} {
		createMD(t, syncerMD(ns, "worker-pool-a", osp, "1"))
	}
	kubeconfigA := machinecontroller.KubeletBootstrapSecretName("worker-pool-a", nsA)
	kubeconfigB := machinecontroller.KubeletBootstrapSecretName("worker-pool-a", nsB)
	if kubeconfigA == kubeconfigB {
		t.Fatalf("both MDs' kubelet bootstrap Secret is %s", kubeconfigA)
	}
	payloadSecret(t, nsA, "worker-pool-a", "bootstrap", ownedBy(nsA, "worker-pool-a"))
	bootstrapB := payloadSecret(t, nsB, "worker-pool-a", "bootstrap", ownedBy(nsB, "worker-pool-a"))

	ctx := testContext(t)
	secrets := asToken(t, fetchToken(t, bootstrapB)).CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace)
	eventually(t, time.Minute, func() error {
		own, err := secrets.Get(ctx, kubeconfigB, getOptions())
		if err != nil {
			return fmt.Errorf("B's fetch token cannot read its own kubelet bootstrap kubeconfig: %w", err)
		}
		if owner, ok := machinecontroller.Owner(own); !ok || owner.Namespace != nsB {
			return fmt.Errorf("B's kubelet bootstrap kubeconfig belongs to %v", owner)
		}
		return nil
	})
	if _, err := secrets.Get(ctx, kubeconfigA, getOptions()); !apierrors.IsForbidden(err) {
		t.Errorf("B's fetch token reading A's kubelet bootstrap kubeconfig: %v, want 403", err)
	}
	if _, err := secrets.Get(ctx, machinecontroller.SecretName("worker-pool-a", nsA, "provisioning"), getOptions()); !apierrors.IsForbidden(err) {
		t.Errorf("B's fetch token reading A's provisioning payload: %v, want 403", err)
	}
}
