package nodejoin

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/facts"
	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens/tokenstest"
)

// fixture is a cluster of two MDs in namespace team, each with a MachineSet,
// and the exchange in front of it.
type fixture struct {
	t        *testing.T
	client   *fake.Clientset
	machines cache.Indexer
	nodes    cache.Indexer
	sets     cache.Indexer
	md       *clusterv1alpha1.MachineDeployment
	ms       *clusterv1alpha1.MachineSet
	other    *clusterv1alpha1.MachineSet
	now      time.Time
	exchange *Exchange
	mode     osm.NodeJoinMode
}

// callers: the fetch ServiceAccount osm-fetch-<md> is the caller of its MD.
type callers struct{}

func (callers) CallerMachineDeployment(u user.Info) (machinecontroller.Ref, bool) {
	name, ok := strings.CutPrefix(u.GetName(), "system:serviceaccount:osm-fetch:osm-fetch-")
	return machinecontroller.Ref{Namespace: "team", Name: name}, ok
}

type resolver struct{ f *fixture }

func (r resolver) Resolve(context.Context, *clusterv1alpha1.MachineDeployment) *resolve.Rendered {
	provisioning, err := resolve.NewPayload(osm.PayloadFormatCloudInit, []byte("#cloud-config\nruncmd: [osm-setup]\n"))
	if err != nil {
		r.f.t.Fatal(err)
	}
	return &resolve.Rendered{NodeJoin: r.f.mode, Provisioning: provisioning,
		Profile: osm.ProfileReference{Namespace: "kube-system", Name: "osp-ubuntu", Version: "v1.6.0"}}
}

type staticFacts struct{ f *facts.Facts }

func (s staticFacts) Current() *facts.Facts { return s.f }

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, client: machinecontrollertest.NewClientset(), now: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), mode: osm.NodeJoinMachineJoin}
	tokenstest.IssueTokens(f.client, func() time.Time { return f.now })
	f.md = machinecontrollertest.MD("team", "pool", "osp-ubuntu", nil)
	other := machinecontrollertest.MD("team", "other", "osp-ubuntu", nil)
	f.ms = machinecontrollertest.MachineSet(f.md, "pool-5d8f7")
	f.other = machinecontrollertest.MachineSet(other, "other-6c9d4")
	f.machines = informers.NewMachines(nil).GetIndexer()
	f.sets = informers.NewMachineSets(nil).GetIndexer()
	f.nodes = informers.NewNodes(nil).GetIndexer()
	f.add(f.sets, f.ms, f.other)
	cluster, err := facts.New(render.ClusterInfo{ServerURL: "https://api.example:6443", CACert: "CA PEM"}, render.NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.exchange = &Exchange{
		Callers:            callers{},
		MachineDeployments: machinecontrollertest.Lister{f.md, other},
		Machines:           machines.NewMachineReader(f.machines, f.sets, f.nodes),
		Resolver:           resolver{f},
		Facts:              staticFacts{cluster},
		Issuer:             &Issuer{Client: f.client, TTL: time.Hour, RetryWindow: 10 * time.Minute, Now: func() time.Time { return f.now }},
		Synced:             func() bool { return true },
	}
	return f
}

func (f *fixture) add(i cache.Indexer, objs ...any) {
	f.t.Helper()
	for _, o := range objs {
		if err := i.Add(o); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fixture) machine(ms *clusterv1alpha1.MachineSet, name string) *clusterv1alpha1.Machine {
	m := machinecontrollertest.Machine(ms, name)
	f.add(f.machines, m)
	return m
}

// join posts a MachineJoin as the fetch credential of MD md.
func (f *fixture) join(md, machine, boot string) (*Answer, error) {
	return f.joinWithSecret(md, machine, Boot{ID: boot})
}

// joinWithSecret is join of a boot that sends its secret.
func (f *fixture) joinWithSecret(md, machine string, boot Boot) (*Answer, error) {
	return f.exchange.Join(context.Background(), Request{
		User:      &user.DefaultInfo{Name: "system:serviceaccount:osm-fetch:osm-fetch-" + md},
		Namespace: "team", MachineName: machine, BootID: boot.ID, BootSecret: boot.Secret,
	})
}

func refusal(t *testing.T, err error) string {
	t.Helper()
	var refused *RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("error %v, want a refusal", err)
	}
	return refused.Reason
}

// A machine of the caller's MD without a node is answered once, with a
// kubeconfig of its own join identity and the provisioning payload; the same
// boot again within the retry window, and nobody after.
func TestExchangeAnswersOnce(t *testing.T) {
	f := newFixture(t)
	m := f.machine(f.ms, "pool-5d8f7-x2k4q")
	answer, err := f.join("pool", m.Name, "boot-1")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(answer.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cluster := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster]
	token := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo].Token
	if cluster.Server != "https://api.example:6443" || string(cluster.CertificateAuthorityData) != "CA PEM" || token == "" {
		t.Errorf("kubeconfig: server %q, CA %q, token %q", cluster.Server, cluster.CertificateAuthorityData, token)
	}
	if !strings.Contains(string(answer.Provisioning), "osm-setup") || answer.ProvisioningFormat != osm.PayloadFormatCloudInit {
		t.Errorf("provisioning %q (%s)", answer.Provisioning, answer.ProvisioningFormat)
	}
	// What the payload was rendered from, for the node's reports.
	if p := answer.Profile; p.Name != "osp-ubuntu" || p.Version != "v1.6.0" || answer.Revision != "3" {
		t.Errorf("rendered from profile %+v, revision %q; want osp-ubuntu v1.6.0, revision 3", p, answer.Revision)
	}
	if want := f.now.Add(time.Hour); !answer.Expiration.Equal(want) {
		t.Errorf("expiration %v, want %v", answer.Expiration, want)
	}
	sa, err := f.client.CoreV1().ServiceAccounts(Namespace).Get(context.Background(), AccountName(MachineKey{Namespace: "team", Name: m.Name}), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec, ok := ParseRecord(sa)
	if !ok || rec.BootID != "boot-1" || rec.MachineUID != m.UID || !rec.AnsweredAt.Equal(f.now) {
		t.Errorf("record %+v, %v", rec, ok)
	}

	f.now = f.now.Add(9 * time.Minute)
	again, err := f.join("pool", m.Name, "boot-1")
	if err != nil {
		t.Fatalf("the same boot within the retry window: %v", err)
	}
	if want := f.now.Add(51 * time.Minute); !again.Expiration.Equal(want) {
		t.Errorf("a retry's token expires at %v, want %v (the first answer's)", again.Expiration, want)
	}
	if reason := refusal(t, errOf(f.join("pool", m.Name, "boot-2"))); !strings.Contains(reason, "another boot") {
		t.Errorf("another boot: %q", reason)
	}
	f.now = f.now.Add(2 * time.Minute)
	if reason := refusal(t, errOf(f.join("pool", m.Name, "boot-1"))); !strings.Contains(reason, "within 10m0s, not later") {
		t.Errorf("the same boot after the window: %q", reason)
	}
}

// A boot that sent its secret is answered again only with that secret: its
// boot id, which reports and logs show, is not enough. Only the secret's hash
// is kept.
func TestExchangeRetryNeedsTheBootSecret(t *testing.T) {
	f := newFixture(t)
	m := f.machine(f.ms, "pool-5d8f7-x2k4q")
	secret := strings.Repeat("0123456789abcdef", 2)
	if _, err := f.joinWithSecret("pool", m.Name, Boot{ID: "boot-1", Secret: secret}); err != nil {
		t.Fatal(err)
	}
	sa, err := f.client.CoreV1().ServiceAccounts(Namespace).Get(context.Background(), AccountName(MachineKey{Namespace: "team", Name: m.Name}), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range sa.Annotations {
		if strings.Contains(v, secret) {
			t.Errorf("annotation %s holds the boot secret", k)
		}
	}
	if rec, _ := ParseRecord(sa); rec.BootSecretHash == "" {
		t.Error("the record keeps no hash of the boot secret")
	}
	for name, boot := range map[string]Boot{
		"no secret":    {ID: "boot-1"},
		"wrong secret": {ID: "boot-1", Secret: strings.Repeat("f", 32)},
	} {
		if reason := refusal(t, errOf(f.joinWithSecret("pool", m.Name, boot))); !strings.Contains(reason, "another boot") {
			t.Errorf("%s: %q", name, reason)
		}
	}
	if _, err := f.joinWithSecret("pool", m.Name, Boot{ID: "boot-1", Secret: secret}); err != nil {
		t.Errorf("the same boot with its secret, within the retry window: %v", err)
	}
}

func errOf(_ *Answer, err error) error { return err }

// Everything that is not the first request for a joining machine of the
// caller's own MD is refused, with the reason.
func TestExchangeRefuses(t *testing.T) {
	f := newFixture(t)
	f.machine(f.ms, "pool-5d8f7-x2k4q")
	f.machine(f.other, "other-6c9d4-abcde")
	joined := f.machine(f.ms, "pool-5d8f7-joined")
	f.add(f.nodes, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: joined.Name}})
	referenced := machinecontrollertest.Machine(f.ms, "pool-5d8f7-noderef")
	referenced.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: "ip-10-0-0-7.ec2.internal"}
	f.add(f.machines, referenced)
	deleting := machinecontrollertest.Machine(f.ms, "pool-5d8f7-deleting")
	deleting.DeletionTimestamp = &metav1.Time{Time: f.now}
	f.add(f.machines, deleting)
	byHand := machinecontrollertest.Machine(f.ms, "by-hand")
	byHand.OwnerReferences = nil
	f.add(f.machines, byHand)

	for _, tc := range []struct {
		name, md, machine, namespace, user, want string
	}{
		{name: "unknown machine", md: "pool", machine: "pool-5d8f7-nope", want: "there is no machine team/pool-5d8f7-nope"},
		{name: "machine of another MD", md: "pool", machine: "other-6c9d4-abcde", want: "does not belong to machinedeployment team/pool"},
		{name: "machine of no MachineSet", md: "pool", machine: "by-hand", want: "does not belong to machinedeployment team/pool"},
		{name: "machine with a node", md: "pool", machine: joined.Name, want: "has joined as node " + joined.Name},
		{name: "machine with a nodeRef", md: "pool", machine: referenced.Name, want: "has joined as node ip-10-0-0-7.ec2.internal"},
		{name: "machine being deleted", md: "pool", machine: deleting.Name, want: "is being deleted"},
		{name: "MD gone", md: "gone", machine: "pool-5d8f7-x2k4q", want: "machinedeployment team/gone is gone"},
		{name: "other namespace", md: "pool", machine: "pool-5d8f7-x2k4q", namespace: "elsewhere", want: "in namespace team only"},
		{name: "not a fetch credential", user: "system:serviceaccount:osm-fetch:default", machine: "pool-5d8f7-x2k4q",
			want: "user system:serviceaccount:osm-fetch:default is not the fetch credential of a MachineDeployment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Request{Namespace: "team", MachineName: tc.machine, BootID: "boot-1",
				User: &user.DefaultInfo{Name: "system:serviceaccount:osm-fetch:osm-fetch-" + tc.md}}
			if tc.namespace != "" {
				r.Namespace = tc.namespace
			}
			if tc.user != "" {
				r.User = &user.DefaultInfo{Name: tc.user}
			}
			_, err := f.exchange.Join(context.Background(), r)
			if reason := refusal(t, err); !strings.Contains(reason, tc.want) {
				t.Errorf("reason %q, want %q", reason, tc.want)
			}
		})
	}
	list, err := f.client.CoreV1().ServiceAccounts(Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("%d join identities after refusals (%v)", len(list.Items), err)
	}
}

// An MD in the compatibility mode is not answered; nor is anybody before the
// informers listed (503: ask again), or while the MD does not render.
func TestExchangeAnswersMachineJoinMDsOnly(t *testing.T) {
	f := newFixture(t)
	m := f.machine(f.ms, "pool-5d8f7-x2k4q")
	f.mode = osm.NodeJoinCompatibility
	if reason := refusal(t, errOf(f.join("pool", m.Name, "b"))); !strings.Contains(reason, "do not join through a MachineJoin") {
		t.Errorf("compatibility mode: %q", reason)
	}
	f.mode = osm.NodeJoinMachineJoin
	f.exchange.Synced = func() bool { return false }
	var unavailable *UnavailableError
	if _, err := f.join("pool", m.Name, "b"); !errors.As(err, &unavailable) {
		t.Errorf("before the informers listed: %v, want unavailable", err)
	}
	f.exchange.Synced = func() bool { return true }
	if _, err := f.join("pool", m.Name, "b"); err != nil {
		t.Errorf("then: %v", err)
	}
}

// A Machine deleted and made again under its name is a new machine: the
// record of the old one does not hold it back.
func TestExchangeRecreatedMachine(t *testing.T) {
	f := newFixture(t)
	m := f.machine(f.ms, "pool-5d8f7-x2k4q")
	if _, err := f.join("pool", m.Name, "boot-1"); err != nil {
		t.Fatal(err)
	}
	again := m.DeepCopy()
	again.UID = "a-new-uid"
	f.add(f.machines, again)
	if _, err := f.join("pool", m.Name, "boot-2"); err != nil {
		t.Fatalf("the new machine of the name: %v", err)
	}
	if _, err := f.join("pool", m.Name, "boot-3"); err == nil {
		t.Error("the new machine was answered twice")
	}
}
