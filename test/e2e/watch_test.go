package e2e

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
)

// TestWatchSeesInputChanges: a watch on OSCs reports a changed MD, a bumped OSP
// version (for every OSC using it) and a deleted MD. It uses its own OSP and MDs so
// the other tests keep their fixtures.
func TestWatchSeesInputChanges(t *testing.T) {
	ctx := testContext(t)
	osp := fromFile(t, "osp-e2e-ubuntu.yaml")
	osp.SetName("e2e-watch")
	create(ctx, t, osp, "kube-system")
	for _, name := range []string{"e2e-watch-a", "e2e-watch-b"} {
		md := fromFile(t, "md-without-profile.yaml")
		md.SetName(name)
		md.SetAnnotations(map[string]string{
			"k8c.io/operating-system-profile":            "e2e-watch",
			"machinedeployment.clusters.k8s.io/revision": "1",
		})
		create(ctx, t, md, testNamespace)
	}
	oscs := env.osm.OsmV1alpha1().OperatingSystemConfigs(testNamespace)
	eventually(t, 30*time.Second, func() error {
		_, err := oscs.Get(ctx, "e2e-watch-b", getOptions())
		return err
	})

	// As informers and `kubectl get -w` do: list, then watch from the list's version.
	list, err := oscs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := oscs.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	t.Log("changing the kubelet version of MD e2e-watch-a")
	patch(ctx, t, mdResource, testNamespace, "e2e-watch-a", `{"metadata":{"annotations":{"machinedeployment.clusters.k8s.io/revision":"2"}},"spec":{"template":{"spec":{"versions":{"kubelet":"1.34.1"}}}}}`)
	waitForEvents(t, w, watch.Modified, map[string]func(*osmv1alpha1.OperatingSystemConfig) bool{
		"e2e-watch-a": func(o *osmv1alpha1.OperatingSystemConfig) bool {
			return nodeInfo(o) == "kubelet v1.34.1 on aws\n"
		},
	})

	t.Log("bumping OSP e2e-watch to v1.1.0 with a changed file")
	patch(ctx, t, ospResource, "kube-system", "e2e-watch", `{"spec":{"version":"v1.1.0","provisioningConfig":{"files":[{"path":"/etc/e2e/node-info","permissions":644,"content":{"inline":{"data":"v1.1.0: kubelet {{ .KubeVersion }}\n"}}}]}}}`)
	bumped := func(want string) func(*osmv1alpha1.OperatingSystemConfig) bool {
		return func(o *osmv1alpha1.OperatingSystemConfig) bool {
			return o.Status.Profile.Version == "v1.1.0" && nodeInfo(o) == want
		}
	}
	waitForEvents(t, w, watch.Modified, map[string]func(*osmv1alpha1.OperatingSystemConfig) bool{
		"e2e-watch-a": bumped("v1.1.0: kubelet v1.34.1\n"),
		"e2e-watch-b": bumped("v1.1.0: kubelet v1.33.4\n"),
	})

	t.Log("deleting MD e2e-watch-b")
	if err := env.dynamic.Resource(mdResource).Namespace(testNamespace).Delete(ctx, "e2e-watch-b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForEvents(t, w, watch.Deleted, map[string]func(*osmv1alpha1.OperatingSystemConfig) bool{
		"e2e-watch-b": func(*osmv1alpha1.OperatingSystemConfig) bool { return true },
	})
}

// TestWatchFromNow: a watch without a resourceVersion starts with an ADDED event per
// OSC (k8s.io/apiserver turns it into sendInitialEvents=true without bookmarks); a
// watch-list request (sendInitialEvents with bookmarks, as client-go's reflectors
// send it) ends its initial events with the initial-events-end bookmark.
func TestWatchFromNow(t *testing.T) {
	ctx := testContext(t)
	want := []string{"e2e-broken-aws", "e2e-broken-aws-2", "e2e-ubuntu-aws", "e2e-ubuntu-openstack"}
	initial := func(t *testing.T, opts metav1.ListOptions) watch.Interface {
		w, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(testNamespace).Watch(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		added := map[string]func(*osmv1alpha1.OperatingSystemConfig) bool{}
		for _, name := range want {
			added[name] = func(*osmv1alpha1.OperatingSystemConfig) bool { return true }
		}
		waitForEvents(t, w, watch.Added, added)
		return w
	}
	t.Run("plain", func(t *testing.T) {
		w := initial(t, metav1.ListOptions{})
		// The stream must stay open, without errors, and without bookmarks the client
		// did not ask for.
		quiet := time.After(2 * time.Second)
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok || ev.Type == watch.Error || ev.Type == watch.Bookmark {
					t.Fatalf("after the initial events: open=%v %s %v", ok, ev.Type, ev.Object)
				}
			case <-quiet:
				return
			}
		}
	})
	t.Run("watch-list", func(t *testing.T) {
		send := true
		w := initial(t, metav1.ListOptions{SendInitialEvents: &send, AllowWatchBookmarks: true,
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
		select {
		case ev, ok := <-w.ResultChan():
			m, err := meta.Accessor(ev.Object)
			if !ok || ev.Type != watch.Bookmark || err != nil || m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
				t.Fatalf("after the initial events: open=%v %s %v, want the initial-events-end bookmark", ok, ev.Type, ev.Object)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no initial-events-end bookmark within 10s")
		}
	})
}

// waitForEvents reads w until, for every name in want, an event of type typ arrived
// whose object satisfies want[name]; other events are skipped.
func waitForEvents(t *testing.T, w watch.Interface, typ watch.EventType, want map[string]func(*osmv1alpha1.OperatingSystemConfig) bool) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	seen := []string{}
	for len(want) > 0 {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed; still waiting for %s of %v (seen: %v)", typ, keys(want), seen)
			}
			osc, isOSC := ev.Object.(*osmv1alpha1.OperatingSystemConfig)
			if !isOSC {
				t.Fatalf("watch event %s with %T: %v", ev.Type, ev.Object, ev.Object)
			}
			seen = append(seen, fmt.Sprintf("%s %s (profile %s, node-info %q)", ev.Type, osc.Name, osc.Status.Profile.Version, nodeInfo(osc)))
			if check, ok := want[osc.Name]; ok && ev.Type == typ && check(osc) {
				delete(want, osc.Name)
			}
		case <-timeout:
			t.Fatalf("no %s event for %v within 30s; seen: %v", typ, keys(want), seen)
		}
	}
}

func nodeInfo(o *osmv1alpha1.OperatingSystemConfig) string {
	for _, f := range o.Spec.ProvisioningConfig.Files {
		if f.Path == "/etc/e2e/node-info" && f.Content.Inline != nil {
			return f.Content.Inline.Data
		}
	}
	return ""
}

func keys[V any](m map[string]V) []string {
	var k []string
	for name := range m {
		k = append(k, name)
	}
	return k
}
