package syncer

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics/testutil"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// MD "pool" in "team-prod" and MD "pool-team" in "prod": machine-controller
// reads the Secrets of both as pool-team-prod-{bootstrap,provisioning}-config.
var (
	pool     = machinecontroller.Ref{Namespace: "team-prod", Name: "pool"}
	poolTeam = machinecontroller.Ref{Namespace: "prod", Name: "pool-team"}
)

func mdAt(ref machinecontroller.Ref, created int64) *clusterv1alpha1.MachineDeployment {
	md := machineDeployment(ref.Name, "osp-ubuntu", "1")
	md.Namespace, md.UID, md.CreationTimestamp = ref.Namespace, types.UID("uid-"+ref.String()), metav1.Unix(created, 0)
	return md
}

func (h *harness) payloadOf(ref machinecontroller.Ref, kind osm.PayloadType) (*corev1.Secret, error) {
	return h.secret(machinecontroller.CloudInitSettingsNamespace, machinecontroller.SecretName(ref.Name, ref.Namespace, kind))
}

// waitOwner waits until both payload Secrets of ref's names belong to owner,
// in the cluster and in the syncer's cache, which decides who owns shared
// names: before the cache has them, an MD that comes next is judged as if
// the names were free.
func (h *harness) waitOwner(ref, owner machinecontroller.Ref) {
	h.t.Helper()
	h.eventually("payload secrets of "+owner.String(), func() (bool, error) {
		for _, kind := range []osm.PayloadType{osm.PayloadTypeBootstrap, osm.PayloadTypeProvisioning} {
			s, err := h.payloadOf(ref, kind)
			if err != nil {
				return false, nil
			}
			cached, err := h.payloads.Lister().Secrets(s.Namespace).Get(s.Name)
			if err != nil {
				return false, nil
			}
			for _, s := range []*corev1.Secret{s, cached} {
				if got, ok := machinecontroller.Owner(s); !ok || got != owner {
					return false, nil
				}
			}
		}
		return true, nil
	})
}

// waitEvent returns the first event starting with prefix, failing after 10 s.
func (h *harness) waitEvent(prefix string) string {
	h.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-h.recorder.Events:
			if strings.HasPrefix(e, prefix) {
				return e
			}
		case <-timeout:
			h.t.Fatalf("no event %q", prefix)
			return ""
		}
	}
}

func TestConflictingMDsNeverShareSecrets(t *testing.T) {
	h := start(t, nil)
	h.osps.Add(profile("osp-ubuntu", "v1"))
	owner := mdAt(pool, 100)
	h.mds.Add(owner)
	h.waitOwner(pool, pool)
	before, _ := h.payloadOf(pool, osm.PayloadTypeBootstrap)

	h.mds.Add(mdAt(poolTeam, 200))
	e := h.waitEvent("Warning " + ReasonSecretConflict)
	for _, want := range []string{"team-prod/pool", "prod/pool-team"} {
		if !strings.Contains(e, want) {
			t.Errorf("event %q does not name %s", e, want)
		}
	}
	after, _ := h.payloadOf(pool, osm.PayloadTypeBootstrap)
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("the owner's bootstrap secret was written again: %v", after.Annotations)
	}
	// The other MD holds no credential that could read the owner's Secrets.
	if _, ok := tokens.Lookup(h.tokenIndex(), poolTeam, tokens.PurposeFetch); ok {
		t.Error("the conflicting MD has a fetch token")
	}
	if _, err := h.client.RbacV1().Roles(machinecontroller.CloudInitSettingsNamespace).Get(ctx, tokens.FetchAccessName(poolTeam), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the conflicting MD's fetch role: %v, want none", err)
	}

	// When the owner goes, the other takes the names over.
	h.mds.Delete(owner)
	h.waitOwner(pool, poolTeam)
}

// The first owner keeps its Secrets, even when an older MD gains a claim later.
func TestFirstOwnerKeepsItsSecrets(t *testing.T) {
	h := start(t, nil)
	h.osps.Add(profile("osp-ubuntu", "v1"))
	h.mds.Add(mdAt(poolTeam, 200))
	h.waitOwner(pool, poolTeam)
	h.mds.Add(mdAt(pool, 100))
	if e := h.waitEvent("Warning " + ReasonSecretConflict); !strings.Contains(e, "machinedeployment prod/pool-team has the Secrets") {
		t.Errorf("event %q, want the younger MD named as the owner", e)
	}
	h.waitOwner(pool, poolTeam)
}

// A writer whose cache has not seen another MD's Secret yet finds it when it
// creates its own, and leaves it alone.
func TestStaleCacheNeverOverwritesAnotherMDsSecret(t *testing.T) {
	client := machinecontrollertest.NewClientset()
	mdInformer := informers.NewMachineDeployments(fcache.NewFakeControllerSource(), "kube-system")
	older, younger := mdAt(pool, 100), mdAt(poolTeam, 200)
	for _, md := range []*clusterv1alpha1.MachineDeployment{older, younger} {
		if err := mdInformer.GetIndexer().Add(md); err != nil {
			t.Fatal(err)
		}
	}
	c, err := New(Config{
		Client: client, MachineDeployments: mdInformer,
		Profiles: cache.NewSharedIndexInformer(fcache.NewFakeControllerSource(), &ospv1alpha1.OperatingSystemProfile{}, 0, cache.Indexers{}),
		Tokens:   informers.NewTokens(client, nil, nil), Payloads: informers.NewPayloads(client, nil),
		Resolver: &fakeResolver{}, Facts: newFakeFacts("ca"), Recorder: record.NewFakeRecorder(10),
	})
	if err != nil {
		t.Fatal(err)
	}
	name := machinecontroller.SecretName(pool.Name, pool.Namespace, osm.PayloadTypeProvisioning)
	theirs := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: machinecontroller.CloudInitSettingsNamespace, Name: name,
			Labels: poolTeam.Labels("provisioning-config"), Annotations: poolTeam.Annotations()},
		Data: map[string][]byte{machinecontroller.SecretDataKey: []byte("theirs")},
	}
	if _, err := client.CoreV1().Secrets(theirs.Namespace).Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ours := theirs.DeepCopy()
	ours.Labels, ours.Annotations, ours.Data = pool.Labels("provisioning-config"), pool.Annotations(), map[string][]byte{machinecontroller.SecretDataKey: []byte("ours")}
	err = c.applySecret(ctx, older, ours)
	if conflict, ok := errors.AsType[*machinecontroller.ConflictError](err); !ok || conflict.Owner != poolTeam {
		t.Errorf("applySecret: %v, want a conflict with %s", err, poolTeam)
	}
	got, _ := client.CoreV1().Secrets(theirs.Namespace).Get(ctx, name, metav1.GetOptions{})
	if string(got.Data[machinecontroller.SecretDataKey]) != "theirs" {
		t.Errorf("the other MD's secret was overwritten: %q", got.Data[machinecontroller.SecretDataKey])
	}
}

func TestSecretNameTooLongWritesNothing(t *testing.T) {
	h := start(t, nil)
	h.osps.Add(profile("osp-ubuntu", "v1"))
	h.mds.Add(machineDeployment(strings.Repeat("w", 230), "osp-ubuntu", "1"))
	if e := h.waitEvent("Warning " + ReasonSecretNameTooLong); !strings.Contains(e, "262 characters") {
		t.Errorf("event %q does not say how long the name is", e)
	}
	if l, _ := h.client.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); len(l.Items) != 0 {
		t.Errorf("%d tokens for an MD that cannot have Secrets", len(l.Items))
	}
}

func TestPayloadTooLargeKeepsSecrets(t *testing.T) {
	h := start(t, nil)
	h.osps.Add(profile("osp-ubuntu", "v1"))
	h.mds.Add(machineDeployment("workers", "osp-ubuntu", "1"))
	h.waitPayloads("workers", "v1", "1")
	h.osps.Modify(profile("osp-ubuntu", "huge-v2"))
	if e := h.waitEvent("Warning " + ReasonPayloadTooLarge); !strings.Contains(e, "more than the 1Mi a Secret can hold") {
		t.Errorf("event %q does not say why", e)
	}
	h.waitPayloads("workers", "v1", "1")
}

func TestBootstrapOverTheCloudsLimitWarns(t *testing.T) {
	overLimit := func() float64 {
		v, err := testutil.GetCounterMetricValue(metrics.UserDataTooLarge.WithLabelValues("aws"))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := overLimit()
	h := start(t, nil)
	h.osps.Add(profile("osp-ubuntu", "big-v1"))
	h.mds.Add(machinecontrollertest.OnCloud(machineDeployment("workers", "osp-ubuntu", "1"), "aws"))
	if e := h.waitEvent("Warning " + ReasonUserDataTooLarge); !strings.Contains(e, "aws accepts at most 16384 bytes") {
		t.Errorf("event %q does not name the limit", e)
	}
	// What the PrometheusRule OSMUserDataOverCloudLimit alerts on.
	if after := overLimit(); after <= before {
		t.Errorf("osm_apiserver_syncer_user_data_too_large_total{cloud_provider=\"aws\"} = %v after the warning, was %v: want it counted", after, before)
	}
	// The Secrets are written all the same: the limit is the cloud's.
	h.waitPayloads("workers", "big-v1", "1")
}

// TestMain registers the metrics before any syncer runs: registering
// initialises them, which must not race with a syncer updating them.
func TestMain(m *testing.M) {
	metrics.Register()
	os.Exit(m.Run())
}

func TestForbiddenWriteWarns(t *testing.T) {
	forbidden := testutil.GetCounterMetricValue
	before, _ := forbidden(metrics.SyncerWriteFailures.WithLabelValues(string(metav1.StatusReasonForbidden)))
	h := start(t, func(c *Config) {
		c.Client.(*fake.Clientset).PrependReactor("create", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
			s := a.(k8stesting.CreateAction).GetObject().(*corev1.Secret)
			if strings.HasSuffix(s.Name, "-provisioning-config") {
				return true, nil, apierrors.NewForbidden(corev1.Resource("secrets"), s.Name, errors.New("denied by policy"))
			}
			return false, nil, nil
		})
	})
	h.osps.Add(profile("osp-ubuntu", "v1"))
	h.mds.Add(machineDeployment("workers", "osp-ubuntu", "1"))
	if e := h.waitEvent("Warning " + ReasonWriteFailed); !strings.Contains(e, "workers-kube-system-provisioning-config") || !strings.Contains(e, "denied by policy") {
		t.Errorf("event %q does not name the secret and the reason", e)
	}
	if after, _ := forbidden(metrics.SyncerWriteFailures.WithLabelValues(string(metav1.StatusReasonForbidden))); after <= before {
		t.Errorf("write failures (Forbidden) %v, want more than %v", after, before)
	}
}
