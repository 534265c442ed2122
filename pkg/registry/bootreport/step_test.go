package bootreport

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// The credentials the server knows for MD team/pool. The fetch token has no
// JWT shape and the password no secret-named key before it in the tails of
// the tests: only scrubbing by value finds them.
const (
	poolKubelet          = "p00l01.kubeletsecret0001"
	poolFetch            = "Rm9vRmV0Y2hUb2tlbk9mVGhlUG9vbE1E-fetch-credential-of-pool"
	poolRegistryPassword = "Regi5try-Pa55-of-pool"
)

// owners are the MDs of machines, by "namespace/machine".
type owners map[string]machines.MachineOwner

func (o owners) Owner(namespace, name string) (machines.MachineOwner, error) {
	if owner, ok := o[namespace+"/"+name]; ok {
		return owner, nil
	}
	return machines.MachineOwner{}, apierrors.NewNotFound(machinecontroller.Machines, name)
}

type stepHarness struct {
	rest     *StepREST
	reports  *REST
	client   *fake.Clientset
	recorder *record.FakeRecorder
	now      time.Time
}

// newStepHarness serves MDs team/pool (machines pool-a, pool-b) and
// team/other (machine other-a); a user "fetch:<md>" is that MD's fetch
// credential.
func newStepHarness(limits Limits) *stepHarness {
	pool := machinecontrollertest.MD("team", "pool", "osp-ubuntu", nil)
	other := machinecontrollertest.MD("team", "other", "osp-ubuntu", nil)
	owner := func(md string, uid types.UID) machines.MachineOwner {
		return machines.MachineOwner{MachineDeployment: machinecontroller.Ref{Namespace: "team", Name: md}, UID: uid}
	}
	machineObjects := func(o owners) owners {
		for key, owner := range o {
			namespace, name, _ := strings.Cut(key, "/")
			owner.Machine = &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name)}}
			o[key] = owner
		}
		return o
	}
	h := &stepHarness{client: fake.NewClientset(), recorder: record.NewFakeRecorder(10), now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	secrets := h.client.CoreV1().Secrets(bootreports.Namespace)
	h.reports = NewREST(secrets)
	h.rest = NewStepREST(StepConfig{
		Secrets: secrets,
		Caller: func(u user.Info) (machinecontroller.Ref, bool) {
			if u == nil {
				return machinecontroller.Ref{}, false
			}
			md, ok := strings.CutPrefix(u.GetName(), "fetch:")
			return machinecontroller.Ref{Namespace: "team", Name: md}, ok
		},
		MachineDeployments: machinecontrollertest.Lister{pool, other},
		Machines: machineObjects(owners{
			"team/pool-a":  owner("pool", pool.UID),
			"team/pool-b":  owner("pool", pool.UID),
			"team/other-a": owner("other", other.UID),
			"team/stale":   owner("pool", "earlier-pool"),
		}),
		Known: func(ref machinecontroller.Ref) []string {
			if ref.Name != "pool" {
				return nil
			}
			return KnownValues(poolKubelet, poolFetch, map[string]render.RegistryAuth{
				"registry.example.com": {Username: "robot", Password: poolRegistryPassword, Auth: base64.StdEncoding.EncodeToString([]byte("robot:" + poolRegistryPassword))},
			})
		},
		Recorder: h.recorder,
		Limits:   limits,
		Now:      func() time.Time { return h.now },
	})
	return h
}

func (h *stepHarness) post(as, namespace, machine string, spec osm.BootStepSpec) (*osm.BootStep, error) {
	ctx := genericapirequest.WithNamespace(context.Background(), namespace)
	if as != "" {
		ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: as})
	}
	h.now = h.now.Add(time.Second)
	obj, err := h.rest.Create(ctx, machine, &osm.BootStep{Spec: spec}, nil, &metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*osm.BootStep), nil
}

func (h *stepHarness) report(t *testing.T, namespace, machine string) *osm.BootReport {
	t.Helper()
	obj, err := h.reports.Get(genericapirequest.WithNamespace(context.Background(), namespace), machine, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*osm.BootReport)
}

func failed(step, tail string) osm.BootStepSpec {
	return osm.BootStepSpec{Step: step, Phase: osm.StepPhaseFailed, ExitCode: ptr.To[int32](1),
		Duration: &metav1.Duration{Duration: time.Second}, BootID: "b1", LogTail: tail}
}

func TestStepRecordsAReport(t *testing.T) {
	h := newStepHarness(Limits{})
	if _, err := h.post("fetch:pool", "team", "pool-a", osm.BootStepSpec{Step: "packages", Phase: osm.StepPhaseStarted, BootID: "b1", MachineDeploymentRevision: "3"}); err != nil {
		t.Fatal(err)
	}
	r := h.report(t, "team", "pool-a")
	if r.Spec.MachineDeployment != "pool" || r.Status.State != osm.BootStateProvisioning || r.Status.Step != "packages" || r.Labels[bootreports.StateLabel] != "Provisioning" {
		t.Errorf("report %+v %+v", r.ObjectMeta, r.Status)
	}
	answer, err := h.post("fetch:pool", "team", "pool-a", failed("packages", "E: Unable to locate package containerd\ntoken=abcdef.0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	if answer.Status.State != osm.BootStateFailed || strings.Contains(answer.Spec.LogTail, "0123456789abcdef") {
		t.Errorf("answer %+v", answer)
	}
	r = h.report(t, "team", "pool-a")
	if r.Status.State != osm.BootStateFailed || strings.Contains(r.Status.Steps[0].LogTail, "0123456789abcdef") {
		t.Errorf("stored %+v", r.Status)
	}
	select {
	case ev := <-h.recorder.Events:
		want := "Warning NodeProvisioningFailed machine pool-a: step packages failed with exit code 1: E: Unable to locate package containerd"
		if ev != want {
			t.Errorf("event %q, want %q", ev, want)
		}
	default:
		t.Error("no Event for the failed step")
	}
}

func TestStepAuthorization(t *testing.T) {
	h := newStepHarness(Limits{})
	started := osm.BootStepSpec{Step: "packages", Phase: osm.StepPhaseStarted}
	tests := []struct {
		name, user, namespace, machine, want string
	}{
		{"no fetch credential", "alice", "team", "pool-a", "alice is none"},
		{"nobody", "", "team", "pool-a", "nobody is none"},
		{"another MD's machine", "fetch:other", "team", "pool-a", "belongs to machinedeployment team/pool, not to team/other"},
		{"another namespace", "fetch:pool", "elsewhere", "pool-a", "not of one in namespace elsewhere"},
		{"an unknown machine", "fetch:pool", "team", "ghost", "machine team/ghost is not known"},
		{"an earlier MD of the name", "fetch:pool", "team", "stale", "earlier machinedeployment"},
		{"an MD that is gone", "fetch:gone", "team", "pool-a", "team/gone is gone"},
	}
	for _, tc := range tests {
		_, err := h.post(tc.user, tc.namespace, tc.machine, started)
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want 403 saying %q", tc.name, err, tc.want)
		}
	}
	if list, _ := h.client.CoreV1().Secrets(bootreports.Namespace).List(context.Background(), metav1.ListOptions{}); len(list.Items) != 0 {
		t.Errorf("refused records wrote %d reports", len(list.Items))
	}
}

func TestStepLimits(t *testing.T) {
	h := newStepHarness(Limits{PerMachine: 1, MachineBurst: 3, PerMachineDeployment: 1, MachineDeploymentBurst: 5})
	started := osm.BootStepSpec{Step: "packages", Phase: osm.StepPhaseStarted}
	post := func(machine string) error {
		h.now = h.now.Add(-time.Second) // post advances the clock: keep it still
		_, err := h.post("fetch:pool", "team", machine, started)
		return err
	}
	for i := range 3 {
		if err := post("pool-a"); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	err := post("pool-a")
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("4th record of a machine: %v, want 429", err)
	}
	if s, ok := apierrors.SuggestsClientDelay(err); !ok || s < 1 {
		t.Errorf("429 without Retry-After: %v", err)
	}
	// The MD's bucket: 2 more from another machine, then 429.
	for i := range 2 {
		if err := post("pool-b"); err != nil {
			t.Fatalf("pool-b record %d: %v", i, err)
		}
	}
	if err := post("pool-b"); !apierrors.IsTooManyRequests(err) {
		t.Errorf("beyond the MD's burst: %v, want 429", err)
	}
	// Another MD is not held up by this one.
	if err := post("other-a"); !apierrors.IsForbidden(err) {
		// fetch:pool may not write other-a: a 403, not a 429.
		t.Errorf("other MD's machine: %v", err)
	}
	if _, err := h.post("fetch:other", "team", "other-a", started); err != nil {
		t.Errorf("another MD throttled by this one's records: %v", err)
	}
}

func TestStepSizeAndValidation(t *testing.T) {
	h := newStepHarness(Limits{})
	_, err := h.post("fetch:pool", "team", "pool-a", failed("packages", strings.Repeat("x", bootreports.MaxRecordBytes+1)))
	if !apierrors.IsRequestEntityTooLargeError(err) {
		t.Errorf("oversized record: %v, want 413", err)
	}
	_, err = h.post("fetch:pool", "team", "pool-a", osm.BootStepSpec{Step: "Bad Name", Phase: osm.StepPhaseStarted})
	if !apierrors.IsInvalid(err) {
		t.Errorf("invalid step name: %v, want 422", err)
	}
	for i := range bootreports.MaxSteps {
		if _, err := h.post("fetch:pool", "team", "pool-b", osm.BootStepSpec{Step: fmt.Sprintf("s%d", i), Phase: osm.StepPhaseStarted}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = h.post("fetch:pool", "team", "pool-b", osm.BootStepSpec{Step: "one-too-many", Phase: osm.StepPhaseStarted})
	if !apierrors.IsRequestEntityTooLargeError(err) {
		t.Errorf("a step beyond the report's bound: %v, want 413", err)
	}
}

// The MD's credentials the server knows never reach the answer, the report
// (as the API serves it and in its Secret), its message or the Event, in
// plain, base64 or wrapped base64 forms; nor does an error quote them.
func TestStepScrubsKnownCredentials(t *testing.T) {
	h := newStepHarness(Limits{})
	wrapped := base64.StdEncoding.EncodeToString([]byte(`{"auths":{"r":{"x":"` + poolFetch + poolRegistryPassword + `"}}}`))
	var lines []string
	for len(wrapped) > 64 {
		lines, wrapped = append(lines, wrapped[:64]), wrapped[64:]
	}
	wrapped = strings.Join(append(lines, wrapped), "\n")
	tail := "using " + poolFetch + " and " + poolRegistryPassword + "\n" +
		"error: kubelet " + poolKubelet + " refused, " + base64.StdEncoding.EncodeToString([]byte(poolFetch)) + "\n" +
		wrapped + "\nlogin robot:" + poolRegistryPassword
	answer, err := h.post("fetch:pool", "team", "pool-a", failed("packages", tail))
	if err != nil {
		t.Fatal(err)
	}
	forms := []string{poolFetch, poolRegistryPassword, poolKubelet, "kubeletsecret0001",
		base64.StdEncoding.EncodeToString([]byte(poolFetch))[:40], wrapped[10:50], wrapped[70:100]}
	check := func(what, text string) {
		t.Helper()
		for _, f := range forms {
			if strings.Contains(text, f) {
				t.Errorf("%s holds %q: %s", what, f, text)
			}
		}
	}
	check("the answer", answer.Spec.LogTail)
	r := h.report(t, "team", "pool-a")
	check("the report's tail", r.Status.Steps[0].LogTail)
	check("the report's message", r.Status.Message)
	if !strings.Contains(r.Status.Message, "error: kubelet "+bootreports.Redacted) {
		t.Errorf("message %q", r.Status.Message)
	}
	secrets, err := h.client.CoreV1().Secrets(bootreports.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		for k, v := range s.Data {
			check("secret "+s.Name+" "+k, string(v))
		}
	}
	select {
	case ev := <-h.recorder.Events:
		check("the event", ev)
	default:
		t.Error("no event")
	}
	// An invalid record's error quotes its values scrubbed.
	bad := failed("packages", "")
	bad.BootID = "id " + poolRegistryPassword
	if _, err := h.post("fetch:pool", "team", "pool-a", bad); err == nil {
		t.Fatal("an invalid boot ID was accepted")
	} else {
		check("the error", err.Error())
	}
}

// answers are the machines' MachineJoin answers, by machine name.
type answers map[string]nodejoin.Record

func (a answers) Of(_ context.Context, m *clusterv1alpha1.Machine) (nodejoin.Record, bool, error) {
	rec, ok := a[m.Name]
	return rec, ok, nil
}

// TestStepOnlyFromTheAnsweredBoot: once a machine was answered, the MD's
// fetch token (in every machine's user-data) reports it only with the secret
// of the answered boot, from any later boot of that node too; the secret
// reaches neither the answer nor the report.
func TestStepOnlyFromTheAnsweredBoot(t *testing.T) {
	h := newStepHarness(Limits{})
	const secret = "5ecret-of-the-answered-boot"
	sum := sha256.Sum256([]byte(secret))
	h.rest.cfg.Answers = answers{
		"pool-a": {BootID: "b1", BootSecretHash: hex.EncodeToString(sum[:])},
		"pool-b": {BootID: "old-profile"}, // answered to a profile that sent no secret
	}
	step := func(boot, secret string) osm.BootStepSpec {
		return osm.BootStepSpec{Step: "packages", Phase: osm.StepPhaseStarted, BootID: boot, BootSecret: secret}
	}
	for name, spec := range map[string]osm.BootStepSpec{
		"the answered boot's ID without its secret":  step("b1", ""),
		"the answered boot's ID with another secret": step("b1", "guess"),
		"another boot without the secret":            step("b2", ""),
	} {
		_, err := h.post("fetch:pool", "team", "pool-a", spec)
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "to another boot: only that boot's node reports it") {
			t.Errorf("%s: %v, want 403", name, err)
		}
	}
	if list, _ := h.client.CoreV1().Secrets(bootreports.Namespace).List(context.Background(), metav1.ListOptions{}); len(list.Items) != 0 {
		t.Fatalf("refused records wrote %d reports", len(list.Items))
	}
	for _, boot := range []string{"b1", "b2-after-a-reboot"} {
		answer, err := h.post("fetch:pool", "team", "pool-a", step(boot, secret))
		if err != nil {
			t.Fatalf("the answered node's boot %s: %v", boot, err)
		}
		if answer.Spec.BootSecret != "" {
			t.Errorf("the answer carries the boot secret: %+v", answer.Spec)
		}
	}
	if _, err := h.post("fetch:pool", "team", "pool-b", step("any", "")); err != nil {
		t.Errorf("a machine answered without a secret: %v", err)
	}
	if _, err := h.post("fetch:other", "team", "other-a", step("any", "")); err != nil {
		t.Errorf("a machine not answered yet: %v", err)
	}
	list, err := h.client.CoreV1().Secrets(bootreports.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		for key, value := range s.Data {
			if strings.Contains(string(value), secret) {
				t.Errorf("report %s keeps the boot secret in %s", s.Name, key)
			}
		}
	}
}
