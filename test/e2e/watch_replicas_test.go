package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/pkg/server"
)

// apiReplica is an in-process osm-apiserver whose API the test reads
// directly, as its loopback user, as a client behind a Service reaches
// one replica or another.
type apiReplica struct {
	*syncerReplica
	oscs func(namespace string) oscClient
}

type oscClient interface {
	List(ctx context.Context, opts metav1.ListOptions) (*osmv1alpha1.OperatingSystemConfigList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

func startAPIReplica(t *testing.T, id string) *apiReplica {
	t.Helper()
	var loopback *rest.Config
	r := startSyncer(t, id, func(c *server.Config) { loopback = rest.CopyConfig(c.Generic.LoopbackClientConfig) })
	client := osmclient.NewForConfigOrDie(loopback)
	a := &apiReplica{syncerReplica: r, oscs: func(ns string) oscClient { return client.OsmV1alpha1().OperatingSystemConfigs(ns) }}
	eventually(t, time.Minute, func() error {
		_, err := a.oscs(testNamespace).List(context.Background(), metav1.ListOptions{})
		return err
	})
	return a
}

// watchFrom watches the OSCs of ns on r from rv.
func (r *apiReplica) watchFrom(t *testing.T, ns, rv string) (watch.Interface, error) {
	t.Helper()
	w, err := r.oscs(ns).Watch(testContext(t), metav1.ListOptions{ResourceVersion: rv})
	if err == nil {
		t.Cleanup(w.Stop)
	}
	return w, err
}

// lastRV reads w until it has been quiet for a moment and returns the
// resourceVersion of its last event.
func lastRV(t *testing.T, w watch.Interface, rv string) string {
	t.Helper()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv
			}
			if osc, isOSC := ev.Object.(*osmv1alpha1.OperatingSystemConfig); isOSC {
				rv = osc.ResourceVersion
			}
		case <-time.After(2 * time.Second):
			w.Stop()
			return rv
		}
	}
}

// TestWatchAcrossReplicasAndRestarts: resourceVersions come from the
// cluster, so an informer that lists from one replica watches from another;
// a replica restarted after a change it missed answers 410 Gone (the client
// lists again and sees it), while the replica that stayed up replays it; a
// resourceVersion the cluster never issued is refused as kube-apiserver
// refuses it (504, Too large resource version), and one of the in-memory
// counter of earlier versions is 410.
func TestWatchAcrossReplicasAndRestarts(t *testing.T) {
	ns := syncerNamespace(t)
	a := startAPIReplica(t, "apisem-a")
	b := startAPIReplica(t, "apisem-b")

	// Every input changes after both replicas started: their positions then
	// pass both starts at once (without changes, bookmarks do it within a
	// minute).
	osp := fmt.Sprintf("e2e-replicas-%d", time.Now().UnixNano()%1_000_000)
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	for _, name := range []string{"keep", "gone"} {
		createMD(t, syncerMD(ns, name, osp, "1"))
	}
	createMachineSet(t, ns, "keep-1")
	touchBootReports(t)
	// An overlay of no MD's profile: kube-apiserver's bookmarks move a
	// resource's position only after etcd reported progress for it, which
	// may take longer than this test waits.
	applyOverlay(t, newOverlay(t, ns, "touch", fmt.Sprintf(infoOverlay, "e2e-no-such-profile", "touch")))
	for _, r := range []*apiReplica{a, b} {
		eventually(t, time.Minute, func() error {
			list, err := r.oscs(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(list.Items) != 2 || list.Items[0].Status.Pending != "" || list.Items[1].Status.Pending != "" {
				return fmt.Errorf("%d configs, want 2 rendered", len(list.Items))
			}
			return nil
		})
	}
	// An informer lists from a and watches from b, then the other way round.
	eventually(t, time.Minute, func() error {
		for _, pair := range [][2]*apiReplica{{a, b}, {b, a}} {
			list, err := pair[0].oscs(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return err
			}
			w, err := pair[1].oscs(ns).Watch(context.Background(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
			if err != nil {
				return fmt.Errorf("watch from the other replica's list: %w", err)
			}
			w.Stop()
		}
		return nil
	})

	list, err := a.oscs(ns).List(testContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A change between the list on a and the watch on b is replayed by b.
	patch(testContext(t), t, mdResource, ns, "keep", `{"spec":{"template":{"spec":{"versions":{"kubelet":"1.34.1"}}}}}`)
	eventually(t, time.Minute, func() error {
		l, err := b.oscs(ns).List(context.Background(), metav1.ListOptions{})
		if err == nil && (len(l.Items) != 2 || nodeInfo(&l.Items[1]) != "kubelet v1.34.1 on aws\n") {
			err = fmt.Errorf("b has not seen the change yet")
		}
		return err
	})
	w, err := b.watchFrom(t, ns, list.ResourceVersion)
	if err != nil {
		t.Fatalf("watch on b from a's list: %v", err)
	}
	waitForEvents(t, w, watch.Modified, map[string]func(*osmv1alpha1.OperatingSystemConfig) bool{
		"keep": func(o *osmv1alpha1.OperatingSystemConfig) bool { return nodeInfo(o) == "kubelet v1.34.1 on aws\n" },
	})
	fromB := lastRV(t, w, list.ResourceVersion)

	// Resumed on a from b's last event: the next change arrives.
	w, err = a.watchFrom(t, ns, fromB)
	if err != nil {
		t.Fatalf("watch on a from b's event: %v", err)
	}
	patch(testContext(t), t, mdResource, ns, "keep", `{"metadata":{"labels":{"step":"two"}}}`)
	waitForEvents(t, w, watch.Modified, map[string]func(*osmv1alpha1.OperatingSystemConfig) bool{
		"keep": func(o *osmv1alpha1.OperatingSystemConfig) bool { return o.Labels["step"] == "two" },
	})
	beforeRestart := lastRV(t, w, fromB)

	// a goes down; an MD is deleted meanwhile; a comes back.
	a.stop()
	if err := env.dynamic.Resource(mdResource).Namespace(ns).Delete(context.Background(), "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	a = startAPIReplica(t, "apisem-a")
	// The restarted replica cannot prove it has the deletion: 410, list again.
	if _, err := a.watchFrom(t, ns, beforeRestart); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("watch on the restarted replica from before its restart: %v, want 410 Gone", err)
	}
	// The replica that stayed up replays it.
	w, err = b.watchFrom(t, ns, beforeRestart)
	if err != nil {
		t.Fatalf("watch on b from before a's restart: %v", err)
	}
	waitForEvents(t, w, watch.Deleted, map[string]func(*osmv1alpha1.OperatingSystemConfig) bool{
		"gone": func(*osmv1alpha1.OperatingSystemConfig) bool { return true },
	})
	// A list on the restarted replica, and a watch from it on the other.
	eventually(t, time.Minute, func() error {
		list, err = a.oscs(ns).List(context.Background(), metav1.ListOptions{})
		if err == nil && len(list.Items) != 1 {
			err = fmt.Errorf("%d configs after the deletion, want 1", len(list.Items))
		}
		return err
	})
	w, err = b.watchFrom(t, ns, list.ResourceVersion)
	if err != nil {
		t.Fatalf("watch on b from the restarted replica's list: %v", err)
	}
	patch(testContext(t), t, mdResource, ns, "keep", `{"metadata":{"labels":{"step":"three"}}}`)
	waitForEvents(t, w, watch.Modified, map[string]func(*osmv1alpha1.OperatingSystemConfig) bool{
		"keep": func(o *osmv1alpha1.OperatingSystemConfig) bool { return o.Labels["step"] == "three" },
	})

	// Through kube-apiserver, as `kubectl get -w` or an informer asks.
	oscs := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns)
	parts := strings.Split(list.ResourceVersion, ".")
	parts[0] += "000000"
	_, err = oscs.Watch(testContext(t), metav1.ListOptions{ResourceVersion: strings.Join(parts, ".")})
	if !apierrors.IsTimeout(err) || !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		t.Errorf("a future resourceVersion: %v, want 504 Too large resource version", err)
	}
	if _, err := oscs.Watch(testContext(t), metav1.ListOptions{ResourceVersion: "99999999"}); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("a resourceVersion of the old in-memory counter: %v, want 410 Gone", err)
	}
}

// createMachineSet creates a MachineSet nobody controls, which only moves
// the MachineSet informers on.
func createMachineSet(t *testing.T, ns, name string) {
	t.Helper()
	ms := &clusterv1alpha1.MachineSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "MachineSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
	}
	ms.Spec.Selector.MatchLabels = map[string]string{"machine": name}
	ms.Spec.Template.Labels = map[string]string{"machine": name}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ms)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.dynamic.Resource(msResource).Namespace(ns).Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.dynamic.Resource(msResource).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}
