package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

var msResource = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinesets"}

// revisionController rolls MachineDeployments of one namespace out the way
// machine-controller's MachineDeployment controller does: a template whose
// hash no MachineSet has gets a new MachineSet with the next revision, then the
// MD's revision annotation follows — unless the MD is paused. A template that
// returns to an older MachineSet's moves that MachineSet to the next revision.
// bumpDelay holds the MD's revision back after the new MachineSet exists,
// widening the window in which the MD's template and revision disagree.
type revisionController struct {
	t         *testing.T
	namespace string
	bumpDelay time.Duration
}

func startRevisionController(t *testing.T, namespace string, bumpDelay time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &revisionController{t: t, namespace: namespace, bumpDelay: bumpDelay}
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			if err := c.syncAll(ctx); err != nil && ctx.Err() == nil {
				t.Logf("revision controller: %v", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
}

func (c *revisionController) syncAll(ctx context.Context) error {
	list, err := env.dynamic.Resource(mdResource).Namespace(c.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range list.Items {
		md := &clusterv1alpha1.MachineDeployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, md); err != nil {
			return err
		}
		if err := c.sync(ctx, md); err != nil {
			return err
		}
	}
	return nil
}

// templateHash is what machine-controller labels MachineSets with.
func templateHash(md *clusterv1alpha1.MachineDeployment) string {
	data, _ := json.Marshal(md.Spec.Template) // marshalling a decoded object cannot fail
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:5])
}

func (c *revisionController) sync(ctx context.Context, md *clusterv1alpha1.MachineDeployment) error {
	if md.Spec.Paused {
		return nil
	}
	sets, err := env.dynamic.Resource(msResource).Namespace(md.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	hash, maxRevision := templateHash(md), 0
	var current *unstructured.Unstructured
	for i := range sets.Items {
		ms := &sets.Items[i]
		owner := metav1.GetControllerOf(ms)
		if owner == nil || owner.UID != md.UID {
			continue
		}
		rev, _ := strconv.Atoi(ms.GetAnnotations()[machinecontroller.AnnotationMDRevision])
		maxRevision = max(maxRevision, rev)
		if ms.GetLabels()["machine-template-hash"] == hash {
			current = ms
		}
	}
	if current != nil && current.GetAnnotations()[machinecontroller.AnnotationMDRevision] == md.Annotations[machinecontroller.AnnotationMDRevision] {
		return nil // rolled out
	}
	next := strconv.Itoa(maxRevision + 1)
	if current != nil && current.GetAnnotations()[machinecontroller.AnnotationMDRevision] == strconv.Itoa(maxRevision) {
		next = strconv.Itoa(maxRevision) // its MachineSet is the newest: only the MD lags
	}
	if current == nil {
		ms := &clusterv1alpha1.MachineSet{
			TypeMeta: metav1.TypeMeta{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "MachineSet"},
			ObjectMeta: metav1.ObjectMeta{
				Namespace: md.Namespace, Name: md.Name + "-" + hash,
				Labels:          map[string]string{"machine-template-hash": hash},
				Annotations:     map[string]string{machinecontroller.AnnotationMDRevision: next},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(md, clusterv1alpha1.SchemeGroupVersion.WithKind("MachineDeployment"))},
			},
		}
		ms.Spec.Replicas = md.Spec.Replicas
		ms.Spec.Template = md.Spec.Template
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ms)
		if err != nil {
			return err
		}
		if _, err := env.dynamic.Resource(msResource).Namespace(md.Namespace).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
			return err
		}
	} else if current.GetAnnotations()[machinecontroller.AnnotationMDRevision] != next {
		annotations := current.GetAnnotations()
		annotations[machinecontroller.AnnotationMDRevision] = next
		current.SetAnnotations(annotations)
		if _, err := env.dynamic.Resource(msResource).Namespace(md.Namespace).Update(ctx, current, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	time.Sleep(c.bumpDelay)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, machinecontroller.AnnotationMDRevision, next)
	_, err = env.dynamic.Resource(mdResource).Namespace(md.Namespace).Patch(ctx, md.Name, "application/merge-patch+json", patch, metav1.PatchOptions{})
	return err
}

// patchMD merge-patches an MD.
func patchMD(t *testing.T, namespace, name, patch string) {
	t.Helper()
	if _, err := env.dynamic.Resource(mdResource).Namespace(namespace).Patch(context.Background(), name,
		"application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch %s/%s: %v", namespace, name, err)
	}
}

// sshKeyPatch is a merge patch giving an MD made by syncerMD another SSH key.
func sshKeyPatch(key string) string {
	return `{"spec":{"template":{"spec":{"providerSpec":{"value":{"cloudProvider":"aws","cloudProviderSpec":{},` +
		`"operatingSystem":"ubuntu","operatingSystemSpec":{"distUpgradeOnBoot":false},"sshPublicKeys":["` + key + `"]}}}}}}`
}

// bootstrapFor checks what machine-controller checks before it creates a
// Machine of revision's MachineSet: the bootstrap Secret carries that revision,
// and its user-data that revision's template (here: its SSH key).
func bootstrapFor(revision, key string) func(*corev1.Secret) error {
	return func(s *corev1.Secret) error {
		if got := s.Annotations[machinecontroller.AnnotationSecretMDRevision]; got != revision {
			return fmt.Errorf("%s: revision %q, want %q", s.Name, got, revision)
		}
		if !strings.Contains(string(s.Data[machinecontroller.SecretDataKey]), key) {
			return fmt.Errorf("%s: revision %s's user-data lacks its template's SSH key %q", s.Name, revision, key)
		}
		return nil
	}
}

// A paused MD whose template changes keeps the user-data of its revision: a
// Machine its current MachineSet creates (a scale-up) gets that revision's
// template. The OSC says what it waits for; unpausing rolls the new template
// out under the next revision.
func TestPausedMachineDeploymentKeepsItsRevisionsUserData(t *testing.T) {
	ns := syncerNamespace(t)
	osp := "e2e-revision-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	startRevisionController(t, ns, 0)
	md := syncerMD(ns, "paused", osp, "")
	delete(md.Annotations, machinecontroller.AnnotationMDRevision)
	createMD(t, md)
	const keyA, keyB = "ssh-ed25519 AAAA key-a@osm", "ssh-ed25519 BBBB key-b@osm"
	payloadSecret(t, ns, "paused", "bootstrap", bootstrapFor("1", "ssh-ed25519 AAAA e2e@osm")) // syncerMD's key
	patchMD(t, ns, "paused", sshKeyPatch(keyA))
	payloadSecret(t, ns, "paused", "bootstrap", bootstrapFor("2", keyA))

	patchMD(t, ns, "paused", `{"spec":{"paused":true}}`)
	patchMD(t, ns, "paused", sshKeyPatch(keyB))
	eventually(t, time.Minute, func() error {
		osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).Get(context.Background(), "paused", getOptions())
		if err != nil {
			return err
		}
		if osc.Status.Pending != "template changed; waits for the MD's next revision" || osc.Status.MachineDeploymentRevision != "2" {
			return fmt.Errorf("OSC status %+v", osc.Status)
		}
		return nil
	})
	// Scale up: the current MachineSet (revision 2) creates a Machine; it
	// must get revision 2's template, for as long as the MD stays paused.
	patchMD(t, ns, "paused", `{"spec":{"replicas":2}}`)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		s := payloadSecret(t, ns, "paused", "bootstrap", func(*corev1.Secret) error { return nil })
		if err := bootstrapFor("2", keyA)(s); err != nil {
			t.Fatalf("while paused: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	patchMD(t, ns, "paused", `{"spec":{"paused":false}}`)
	payloadSecret(t, ns, "paused", "bootstrap", bootstrapFor("3", keyB))
	eventually(t, time.Minute, func() error {
		osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).Get(context.Background(), "paused", getOptions())
		if err != nil {
			return err
		}
		if osc.Status.Pending != "" || osc.Status.MachineDeploymentRevision != "3" {
			return fmt.Errorf("OSC status %+v", osc.Status)
		}
		return nil
	})
}

// A template change races machine-controller's revision bump: until the MD's
// revision follows, the Secret of the old revision never carries the new
// template.
func TestTemplateChangeRacingTheRevisionBump(t *testing.T) {
	ns := syncerNamespace(t)
	osp := "e2e-race-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	startRevisionController(t, ns, 2*time.Second)
	md := syncerMD(ns, "racing", osp, "")
	delete(md.Annotations, machinecontroller.AnnotationMDRevision)
	createMD(t, md)
	const keyOld, keyNew = "ssh-ed25519 AAAA e2e@osm", "ssh-ed25519 CCCC key-new@osm"
	payloadSecret(t, ns, "racing", "bootstrap", bootstrapFor("1", keyOld))

	patchMD(t, ns, "racing", sshKeyPatch(keyNew))
	start := time.Now()
	for {
		s := payloadSecret(t, ns, "racing", "bootstrap", func(*corev1.Secret) error { return nil })
		revision := s.Annotations[machinecontroller.AnnotationSecretMDRevision]
		hasNew := strings.Contains(string(s.Data[machinecontroller.SecretDataKey]), keyNew)
		if revision == "1" && hasNew {
			t.Fatalf("after %s the Secret of revision 1 carries revision 2's template", time.Since(start).Round(time.Millisecond))
		}
		if revision == "2" {
			if err := bootstrapFor("2", keyNew)(s); err != nil {
				t.Fatal(err)
			}
			t.Logf("revision 2 rolled out %s after the template change", time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("no revision 2 after a minute: %v", s.Annotations)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
