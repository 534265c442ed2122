package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	overlaysv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/overlays/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// newOverlay decodes an overlay from the YAML of its spec.
func newOverlay(t testing.TB, namespace, name, spec string) *overlaysv1alpha1.OperatingSystemProfileOverlay {
	t.Helper()
	o := &overlaysv1alpha1.OperatingSystemProfileOverlay{}
	if err := yaml.UnmarshalStrict([]byte("spec:\n"+spec), o); err != nil {
		t.Fatalf("overlay %s/%s: %v", namespace, name, err)
	}
	o.Namespace, o.Name = namespace, name
	return o
}

// applyOverlay creates or updates o (kube-apiserver validates it against the CRD).
func applyOverlay(t testing.TB, o *overlaysv1alpha1.OperatingSystemProfileOverlay) *overlaysv1alpha1.OperatingSystemProfileOverlay {
	t.Helper()
	ctx := context.Background()
	client := env.osm.OverlaysV1alpha1().OperatingSystemProfileOverlays(o.Namespace)
	got, err := client.Get(ctx, o.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		got, err = client.Create(ctx, o, metav1.CreateOptions{})
		t.Cleanup(func() { _ = client.Delete(context.Background(), o.Name, metav1.DeleteOptions{}) })
	} else if err == nil {
		got.Spec = o.Spec
		got, err = client.Update(ctx, got, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatalf("overlay %s/%s: %v", o.Namespace, o.Name, err)
	}
	return got
}

// overlayReady waits until the overlay's Ready condition is of its current
// generation and has reason, and returns the overlay.
func overlayReady(t testing.TB, namespace, name, reason string) *overlaysv1alpha1.OperatingSystemProfileOverlay {
	t.Helper()
	var o *overlaysv1alpha1.OperatingSystemProfileOverlay
	eventually(t, time.Minute, func() error {
		var err error
		if o, err = env.osm.OverlaysV1alpha1().OperatingSystemProfileOverlays(namespace).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		c := meta.FindStatusCondition(o.Status.Conditions, overlaysv1alpha1.ConditionReady)
		if c == nil || c.ObservedGeneration != o.Generation || c.Reason != reason {
			return fmt.Errorf("overlay %s/%s: Ready %+v, want reason %s for generation %d", namespace, name, c, reason, o.Generation)
		}
		return nil
	})
	return o
}

func readyMessage(o *overlaysv1alpha1.OperatingSystemProfileOverlay) string {
	if c := meta.FindStatusCondition(o.Status.Conditions, overlaysv1alpha1.ConditionReady); c != nil {
		return c.Message
	}
	return ""
}

// provisioningHas checks a provisioning Secret's user-data writes path with content.
func provisioningHas(t testing.TB, path, content string) func(*corev1.Secret) error {
	return func(s *corev1.Secret) error {
		data := string(s.Data[machinecontroller.SecretDataKey])
		if !strings.Contains(data, path) {
			return fmt.Errorf("%s writes no %s yet", s.Name, path)
		}
		if got := cloudConfigFile(t, data, path); got != content {
			return fmt.Errorf("%s: %s is %q, want %q", s.Name, path, got, content)
		}
		return nil
	}
}

const infoOverlay = `  profiles: [%s]
  provisioningConfig:
    files:
      - path: /etc/e2e/overlay
        content:
          inline:
            data: "%s {{ .KubeVersion }}\n"
`

// TestOverlayShapesPayloadsAndOSC: an overlay's file reaches the OSC, its
// status and table, the provisioning Secret and OSC watchers; a new
// generation renders again with the revision the Secrets had; the overlay's
// status says it applies to the MD.
func TestOverlayShapesPayloadsAndOSC(t *testing.T) {
	ns := createNamespace(t, fmt.Sprintf("overlay-%d", time.Now().UnixNano()%1_000_000_000))
	osp := "e2e-overlay-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	createMD(t, syncerMD(ns, "pool", osp, "3"))
	payloadSecret(t, ns, "pool", "provisioning", annotated("3", "v1.0.0"))

	ctx := testContext(t)
	oscs := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns)
	list, err := oscs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(list.ResourceVersion, ".")
	if len(parts) != 9 {
		t.Fatalf("resourceVersion %s: want 8 streams (the 7th overlays) and the facts", list.ResourceVersion)
	}
	// A position without the overlays' part is of other inputs: its
	// watchers are told to list again.
	old := strings.Join(append(parts[:6:6], parts[7:]...), ".")
	if _, err := oscs.Watch(ctx, metav1.ListOptions{ResourceVersion: old}); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("watch from the six-stream position %s: %v, want 410 Gone", old, err)
	}
	w, err := oscs.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	o := applyOverlay(t, newOverlay(t, ns, "info", fmt.Sprintf(infoOverlay, osp, "first")))
	waitForEvents(t, w, watch.Modified, map[string]func(*osmv1alpha1.OperatingSystemConfig) bool{
		"pool": func(osc *osmv1alpha1.OperatingSystemConfig) bool {
			return len(osc.Status.Overlays) == 1 && osc.Status.Overlays[0].Generation == o.Generation
		},
	})
	payloadSecret(t, ns, "pool", "provisioning", provisioningHas(t, "/etc/e2e/overlay", "first v1.33.4\n"))
	ready := overlayReady(t, ns, "info", overlaysv1alpha1.ReasonApplied)
	if ready.Status.MachineDeployments != 1 || readyMessage(ready) != "applied to the 1 MachineDeployments it selects" {
		t.Errorf("status %+v", ready.Status)
	}
	osc, err := oscs.Get(ctx, "pool", getOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got := osc.Status.Overlays; len(got) != 1 || got[0] != (osmv1alpha1.OverlayReference{Namespace: ns, Name: "info", Generation: 1}) {
		t.Errorf("status.overlays %+v", got)
	}
	if fileData(t, osc.Spec.ProvisioningConfig.Files, "/etc/e2e/overlay") != "first v1.33.4\n" {
		t.Error("the OSC's spec lacks the overlay's file")
	}
	if out := kubectl(t, "get", "osc", "-n", ns, "pool"); !strings.Contains(out, "OVERLAYS") || !strings.Contains(out, " info ") {
		t.Errorf("kubectl get osc:\n%s", out)
	}
	if out := kubectl(t, "get", "ospo", "-n", ns); !strings.Contains(out, "Applied") || !strings.Contains(out, "True") {
		t.Errorf("kubectl get ospo:\n%s", out)
	}

	t.Log("a new generation of the overlay: the Secrets follow at once, for the MD's revision")
	applyOverlay(t, newOverlay(t, ns, "info", fmt.Sprintf(infoOverlay, osp, "second")))
	s := payloadSecret(t, ns, "pool", "provisioning", provisioningHas(t, "/etc/e2e/overlay", "second v1.33.4\n"))
	if err := annotated("3", "v1.0.0")(s); err != nil {
		t.Error(err)
	}
	overlayReady(t, ns, "info", overlaysv1alpha1.ReasonApplied)

	t.Log("the overlay deleted: the file goes")
	if err := env.osm.OverlaysV1alpha1().OperatingSystemProfileOverlays(ns).Delete(ctx, "info", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	payloadSecret(t, ns, "pool", "provisioning", func(s *corev1.Secret) error {
		if strings.Contains(string(s.Data[machinecontroller.SecretDataKey]), "/etc/e2e/overlay") {
			return fmt.Errorf("%s still writes the overlay's file", s.Name)
		}
		return nil
	})
}

// TestOverlayOrderConflictAndErrors: overlays apply by name; two that set
// the same file fail the MD's render, which keeps its Secrets, and both say
// so; a template that does not parse is Invalid, on the overlay and the OSC.
func TestOverlayOrderConflictAndErrors(t *testing.T) {
	ns := createNamespace(t, fmt.Sprintf("overlay-%d", time.Now().UnixNano()%1_000_000_000))
	osp := "e2e-overlay-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	createMD(t, syncerMD(ns, "pool", osp, "1"))
	runcmd := func(cmd string) string {
		return fmt.Sprintf("  profiles: [%s]\n  provisioningConfig:\n    modules:\n      runcmd: [%q]\n", osp, cmd)
	}
	applyOverlay(t, newOverlay(t, ns, "20-second", runcmd("echo second")))
	applyOverlay(t, newOverlay(t, ns, "10-first", runcmd("echo first")))
	payloadSecret(t, ns, "pool", "provisioning", func(s *corev1.Secret) error {
		data := string(s.Data[machinecontroller.SecretDataKey])
		first, second := strings.Index(data, "echo first"), strings.Index(data, "echo second")
		if first < 0 || second < first {
			return fmt.Errorf("%s: runcmd not in the overlays' order (first at %d, second at %d)", s.Name, first, second)
		}
		return nil
	})

	t.Log("both overlays set /etc/e2e/conflict")
	var good *corev1.Secret
	file := func(name string) string {
		return fmt.Sprintf("  profiles: [%s]\n  provisioningConfig:\n    files: [{path: /etc/e2e/conflict, content: {inline: {data: %s}}}]\n", osp, name)
	}
	applyOverlay(t, newOverlay(t, ns, "10-first", file("first")))
	good = payloadSecret(t, ns, "pool", "provisioning", provisioningHas(t, "/etc/e2e/conflict", "first"))
	applyOverlay(t, newOverlay(t, ns, "20-second", file("second")))
	want := fmt.Sprintf("overlay conflict: overlays %s/10-first and %s/20-second both set file /etc/e2e/conflict in provisioningConfig", ns, ns)
	ctx := testContext(t)
	eventually(t, time.Minute, func() error {
		osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).Get(ctx, "pool", getOptions())
		if err != nil {
			return err
		}
		if osc.Status.RenderError != want {
			return fmt.Errorf("renderError %q, want %q", osc.Status.RenderError, want)
		}
		return nil
	})
	for _, name := range []string{"10-first", "20-second"} {
		if o := overlayReady(t, ns, name, overlaysv1alpha1.ReasonConflict); !strings.HasPrefix(readyMessage(o), want+", for 1 of 1 MachineDeployments ("+ns+"/pool)") {
			t.Errorf("%s: %s", name, readyMessage(o))
		}
	}
	if out := kubectl(t, "get", "osc", "-n", ns, "pool"); !strings.Contains(out, "Error: overlay conflict") {
		t.Errorf("kubectl get osc:\n%s", out)
	}
	assertSecretKept(t, ns, "pool", good)

	t.Log("the second overlay's template does not parse")
	applyOverlay(t, newOverlay(t, ns, "20-second", fmt.Sprintf("  profiles: [%s]\n  provisioningConfig:\n    files: [{path: /etc/e2e/other, content: {inline: {data: \"{{ .KubeVersion \"}}}]\n", osp)))
	o := overlayReady(t, ns, "20-second", overlaysv1alpha1.ReasonInvalid)
	if !strings.Contains(readyMessage(o), "overlay "+ns+"/20-second: provisioningConfig file /etc/e2e/other: template: line 1: ") {
		t.Errorf("Invalid: %s", readyMessage(o))
	}
	eventually(t, time.Minute, func() error {
		osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).Get(ctx, "pool", getOptions())
		if err != nil {
			return err
		}
		if !strings.HasPrefix(osc.Status.RenderError, "overlay "+ns+"/20-second: provisioningConfig file /etc/e2e/other: template: line 1:") {
			return fmt.Errorf("renderError %q", osc.Status.RenderError)
		}
		return nil
	})
	eventually(t, time.Minute, func() error {
		events, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=pool,reason=RenderFailed"})
		if err != nil {
			return err
		}
		for _, e := range events.Items {
			if strings.Contains(e.Message, "overlay "+ns+"/20-second") {
				return nil
			}
		}
		return fmt.Errorf("no RenderFailed event naming the overlay (%d events)", len(events.Items))
	})
	assertSecretKept(t, ns, "pool", good)
	overlayReady(t, ns, "10-first", overlaysv1alpha1.ReasonApplied)
}

// assertSecretKept checks that the MD's provisioning Secret still holds
// what it held.
func assertSecretKept(t *testing.T, ns, md string, want *corev1.Secret) {
	t.Helper()
	got, err := env.kube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(context.Background(), want.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Data[machinecontroller.SecretDataKey]) != string(want.Data[machinecontroller.SecretDataKey]) {
		t.Errorf("%s/%s: the last good provisioning Secret was replaced", ns, md)
	}
}

// TestOverlayTenancy: an overlay reaches the MDs of its own namespace; one
// that names another namespace is Invalid and changes nothing there; one in
// kube-system reaches the namespaces it names. A tenant bound to the editor
// role in its namespace cannot write overlays in kube-system.
func TestOverlayTenancy(t *testing.T) {
	id := time.Now().UnixNano() % 1_000_000_000
	nsA, nsB := createNamespace(t, fmt.Sprintf("tenant-a-%d", id)), createNamespace(t, fmt.Sprintf("tenant-b-%d", id))
	osp := fmt.Sprintf("e2e-tenancy-%d", id)
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	createMD(t, syncerMD(nsA, "pool", osp, "1"))
	createMD(t, syncerMD(nsB, "pool", osp, "1"))
	plainB := payloadSecret(t, nsB, "pool", "provisioning", annotated("1", "v1.0.0"))

	reachOut := newOverlay(t, nsA, "reach-out", fmt.Sprintf(infoOverlay, osp, "from-a"))
	reachOut.Spec.Namespaces = []string{nsB}
	applyOverlay(t, reachOut)
	if o := overlayReady(t, nsA, "reach-out", overlaysv1alpha1.ReasonInvalid); !strings.Contains(readyMessage(o), "reaches only its own MachineDeployments") || o.Status.MachineDeployments != 0 {
		t.Errorf("reach-out: %d MDs, %s", o.Status.MachineDeployments, readyMessage(o))
	}

	admin := newOverlay(t, "kube-system", "e2e-tenancy-"+fmt.Sprint(id), fmt.Sprintf(infoOverlay, osp, "from-kube-system"))
	admin.Spec.Namespaces = []string{nsA}
	applyOverlay(t, admin)
	payloadSecret(t, nsA, "pool", "provisioning", provisioningHas(t, "/etc/e2e/overlay", "from-kube-system v1.33.4\n"))
	if o := overlayReady(t, "kube-system", admin.Name, overlaysv1alpha1.ReasonApplied); o.Status.MachineDeployments != 1 {
		t.Errorf("the admin's overlay selects %d MDs, want 1", o.Status.MachineDeployments)
	}
	// Whatever the others did, tenant B's payloads are as they were.
	time.Sleep(2 * time.Second)
	assertSecretKept(t, nsB, "pool", plainB)
	osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(nsB).Get(context.Background(), "pool", getOptions())
	if err != nil || len(osc.Status.Overlays) != 0 || osc.Status.RenderError != "" {
		t.Errorf("tenant B's OSC: %+v, %v", osc.Status, err)
	}

	token := tenantToken(t, nsA, "osm:operatingsystemprofileoverlays-editor")
	tenant := clientFor(t, token)
	eventually(t, 30*time.Second, func() error {
		_, err := tenant.OverlaysV1alpha1().OperatingSystemProfileOverlays(nsA).List(context.Background(), metav1.ListOptions{})
		return err
	})
	_, err = tenant.OverlaysV1alpha1().OperatingSystemProfileOverlays("kube-system").Create(context.Background(),
		newOverlay(t, "kube-system", "tenant-a", fmt.Sprintf(infoOverlay, osp, "x")), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("a tenant's overlay in kube-system: %v, want 403", err)
	}
}
