package migrate

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var options = Options{ProfileNamespace: "kube-system", UpstreamNamespace: "kube-system",
	DefaultProfiles: []string{"osp-flatcar", "osp-ubuntu"}, Now: now}

// plan finds and plans, and compares the printed plan with testdata/golden.
func plan(t *testing.T, c *cluster, golden string) *Plan {
	t.Helper()
	s, err := Find(context.Background(), c.clients(), options)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPlan(s)
	var out bytes.Buffer
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	compareGolden(t, out.Bytes(), golden)
	return p
}

// compareGolden compares out with testdata/golden (go test -update writes it).
func compareGolden(t *testing.T, out []byte, golden string) {
	t.Helper()
	path := filepath.Join("testdata", golden)
	if *update {
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(out, want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n%s", path, out)
	}
}

// applyPlan applies p and returns the actions of the steps that were done;
// what it prints is compared with testdata/golden.
func applyPlan(t *testing.T, c *cluster, p *Plan, golden string) []Action {
	t.Helper()
	var done []Action
	var out bytes.Buffer
	if err := p.WriteApplying(&out); err != nil {
		t.Fatal(err)
	}
	err := Apply(context.Background(), c.clients(), p, func(i int, s Step, err error) {
		if err == nil && s.Wait == "" {
			done = append(done, s.Action)
		}
		if werr := WriteResult(&out, i, s, err); werr != nil {
			t.Fatal(werr)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WriteLeft(&out); err != nil {
		t.Fatal(err)
	}
	compareGolden(t, out.Bytes(), golden)
	return done
}

// writes counts the create, update, patch and delete calls of the fakes.
func writes(c *cluster) int {
	n := 0
	for _, actions := range [][]k8stesting.Action{c.kube.Actions(), c.dynamic.Actions(), c.osm.Actions()} {
		for _, a := range actions {
			switch a.GetVerb() {
			case "create", "update", "patch", "delete":
				n++
			}
		}
	}
	return n
}

// The migration of newCluster, run three times: the first run does what it
// can and leaves what must wait; once osm-apiserver has taken over every
// MD's Secrets, the second does the rest; the third finds nothing to do.
func TestMigrationIsOrderedAndIdempotent(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t)

	first := plan(t, c, "first-run.txt")
	done := applyPlan(t, c, first, "first-run-applied.txt")
	want := []Action{DeleteWebhookConfiguration, RemoveFinalizer, DeleteUpstreamPayloads, RemoveFinalizer, DeleteOSCs, DeleteOSCCRD}
	if !slices.Equal(done, want) {
		t.Errorf("first run did %v, want %v", done, want)
	}
	mustBeGone(t, c, "webhook configuration", func() error {
		_, err := c.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "operatingsystemmanager.k8c.io", metav1.GetOptions{})
		return err
	})
	if _, err := c.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "machine-controller.kubermatic.io", metav1.GetOptions{}); err != nil {
		t.Errorf("machine-controller's webhook configuration: %v", err)
	}
	mustBeGone(t, c, "upstream's crd", func() error {
		_, err := c.dynamic.Resource(CRDResource).Get(ctx, OSCCRD, metav1.GetOptions{})
		return err
	})
	mustBeGone(t, c, "upstream's secret of the deleted MD", func() error {
		_, err := c.kube.CoreV1().Secrets(settings).Get(ctx, "gone-e2e-bootstrap-config", metav1.GetOptions{})
		return err
	})
	for md, want := range map[string][]string{"a": {"keep.example.com/x"}, "b": {Finalizer}, "gone": nil} {
		u, err := c.dynamic.Resource(MachineDeploymentResource).Namespace("e2e").Get(ctx, md, metav1.GetOptions{})
		if err != nil || !slices.Equal(u.GetFinalizers(), want) {
			t.Errorf("machinedeployment e2e/%s: finalizers %v (%v), want %v", md, u.GetFinalizers(), err, want)
		}
	}
	if _, err := c.kube.CoreV1().Secrets(settings).Get(ctx, GetterTokenSecret, metav1.GetOptions{}); err != nil {
		t.Errorf("the getter token was deleted while e2e/b's payloads hand it out: %v", err)
	}

	// osm-apiserver's syncer takes e2e/b's Secrets over (its profile came).
	for _, o := range ourPayloads(machinecontroller.Ref{Namespace: "e2e", Name: "b"}, "2") {
		if err := c.kube.Tracker().Update(secretsResource, o, settings); err != nil {
			t.Fatal(err)
		}
	}
	second := plan(t, c, "second-run.txt")
	done = applyPlan(t, c, second, "second-run-applied.txt")
	want = []Action{RemoveFinalizer, DeleteNodeCredentials, DeleteGetter}
	if !slices.Equal(done, want) {
		t.Errorf("second run did %v, want %v", done, want)
	}
	for _, name := range []string{GetterTokenSecret, "e2e-a-kubelet-bootstrap-config"} {
		mustBeGone(t, c, "secret "+name, func() error {
			_, err := c.kube.CoreV1().Secrets(settings).Get(ctx, name, metav1.GetOptions{})
			return err
		})
	}

	before := writes(c)
	third := plan(t, c, "third-run.txt")
	if done := applyPlan(t, c, third, "third-run-applied.txt"); len(done) != 0 || !third.Empty() {
		t.Errorf("third run did %v", done)
	}
	if after := writes(c); after != before {
		t.Errorf("the third run wrote %d times", after-before)
	}
}

// While upstream's controller runs, nothing is applied: it would delete the
// Secrets osm-apiserver took over.
func TestRunningUpstreamBlocks(t *testing.T) {
	c := newCluster(t)
	renewed := metav1.NewMicroTime(now.Add(-3 * time.Second))
	lease, err := c.kube.CoordinationV1().Leases("kube-system").Get(context.Background(), ControllerLease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lease.Spec.RenewTime = &renewed
	if _, err := c.kube.CoordinationV1().Leases("kube-system").Update(context.Background(), lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := plan(t, c, "upstream-running.txt")
	before := writes(c)
	if err := Apply(context.Background(), c.clients(), p, func(int, Step, error) {}); !errors.Is(err, ErrBlocked) {
		t.Errorf("Apply = %v, want ErrBlocked", err)
	}
	if writes(c) != before {
		t.Error("a blocked plan wrote")
	}
}

// A Machine without a Node may be booting from upstream's payloads: the
// credentials they hold stay until it joined.
func TestJoiningMachinesKeepUpstreamsCredentials(t *testing.T) {
	c := newCluster(t)
	for _, o := range ourPayloads(machinecontroller.Ref{Namespace: "e2e", Name: "b"}, "2") {
		if err := c.kube.Tracker().Update(secretsResource, o, settings); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []runtime.Object{machine("a-1", true), machine("b-1", false)} {
		if err := c.dynamic.Tracker().Add(m); err != nil {
			t.Fatal(err)
		}
	}
	p := plan(t, c, "machine-joining.txt")
	for _, s := range p.Steps {
		if waits := s.Wait != ""; waits != (s.Action == DeleteGetter || s.Action == DeleteNodeCredentials) {
			t.Errorf("step %q waits: %q", s.Text, s.Wait)
		}
	}
}

func mustBeGone(t *testing.T, _ *cluster, what string, get func() error) {
	t.Helper()
	if err := get(); !apierrors.IsNotFound(err) {
		t.Errorf("%s: %v, want it gone", what, err)
	}
}

// An MD whose nodes post a MachineJoin reads no provisioning Secret: once its
// bootstrap Secret is ours it is taken over, and upstream's provisioning
// Secret (its payload holds upstream's credentials) is a leftover to delete.
// Until osm-apiserver says how its nodes join, both Secrets are waited for.
func TestMachineJoinMDsNeedNoProvisioningSecret(t *testing.T) {
	newMD := func() MachineDeployment {
		return MachineDeployment{Ref: machinecontroller.Ref{Namespace: "e2e", Name: "a"}, Revision: "3", Secrets: [2]Secret{
			{Kind: osm.PayloadTypeBootstrap, Name: "a-e2e-bootstrap-config", Exists: true, Ours: true, Revision: "3"},
			{Kind: osm.PayloadTypeProvisioning, Name: "a-e2e-provisioning-config", Exists: true, Revision: "3"},
		}}
	}
	for _, mode := range []osm.NodeJoinMode{"", osm.NodeJoinCompatibility} {
		m := newMD()
		m.joins(mode)
		if m.current() || !m.upstreams() || len(m.Leftovers) != 0 {
			t.Errorf("join mode %q: current %v, upstreams %v, leftovers %v; want upstream's provisioning Secret waited for",
				mode, m.current(), m.upstreams(), m.Leftovers)
		}
	}
	m := newMD()
	m.joins(osm.NodeJoinMachineJoin)
	if !m.current() || m.upstreams() {
		t.Errorf("MachineJoin: current %v, upstreams %v; want taken over", m.current(), m.upstreams())
	}
	want := []Object{{Kind: "Secret", Namespace: settings, Name: "a-e2e-provisioning-config"}}
	if !slices.Equal(m.Leftovers, want) {
		t.Errorf("MachineJoin: leftovers %v, want %v", m.Leftovers, want)
	}
	if why := secretsWait(m); why != "" {
		t.Errorf("MachineJoin: waits for %q", why)
	}
	deleting := newMD()
	deleting.Deleting = true
	deleting.joins(osm.NodeJoinMachineJoin)
	if len(deleting.Leftovers) != 0 {
		t.Errorf("an MD being deleted: leftovers %v; its Secrets go with DeleteUpstreamPayloads", deleting.Leftovers)
	}
}
