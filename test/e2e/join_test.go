package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// TestMachineJoin: with the default profile, the credential in a VM's
// user-data can do one thing — post the MachineJoin of a machine of its own
// MD that has no node — once; the answer's kubelet credential is good for the
// client certificate of that machine's node only, and goes when the Node
// registers; the MD has no kubelet bootstrap token, no kubeconfig or
// provisioning Secret and no RBAC of its own.
func TestMachineJoin(t *testing.T) {
	ns := syncerNamespace(t)
	ms := joinMD(t, ns, "pool")
	otherMS := joinMD(t, ns, "other")
	createMachine(t, ms, "pool-5d8f7-x2k4q")
	createMachine(t, ms, "pool-5d8f7-joined")
	createMachine(t, otherMS, "other-5d8f7-abcde")
	createNode(t, "pool-5d8f7-joined")
	token := userDataToken(t, ns, "pool")
	otherToken := userDataToken(t, ns, "other")
	ctx := testContext(t)
	ref := machinecontroller.Ref{Namespace: ns, Name: "pool"}

	if mode := nodeJoinMode(t, ns, "pool"); mode != osmv1alpha1.NodeJoinMachineJoin {
		t.Errorf("status.nodeJoin.mode %q, want MachineJoin", mode)
	}
	checkNoCompatibilityObjects(t, ref)
	settings := machinecontroller.CloudInitSettingsNamespace
	if _, err := asToken(t, token).CoreV1().Secrets(settings).Get(ctx, machinecontroller.SecretName("pool", ns, osm.PayloadTypeBootstrap), metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the user-data credential reads the bootstrap Secret: %v, want 403", err)
	}

	start := time.Now()
	answer, err := joinAs(t, token, ns, "pool-5d8f7-x2k4q", "boot-a")
	if err != nil {
		t.Fatalf("MachineJoin: %v", err)
	}
	t.Logf("MachineJoin answered in %s", time.Since(start).Round(time.Millisecond))
	provisioning, err := env.osm.OsmV1alpha1().ProvisioningPayloads(ns).Get(ctx, "pool-provisioning", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(answer.Status.Provisioning) != provisioning.Spec.UserData || answer.Status.ProvisioningFormat != osmv1alpha1.PayloadFormatCloudInit {
		t.Errorf("the answer's provisioning payload (%d bytes, %s) is not the MD's", len(answer.Status.Provisioning), answer.Status.ProvisioningFormat)
	}
	// It says what the payload was rendered from, as the MD's OSC does: the node reports it.
	osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns).Get(ctx, "pool", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := answer.Status.Profile; p.Name != joinProfile || p.Version == "" || p.Name != osc.Status.Profile.Name || p.Version != osc.Status.Profile.Version ||
		answer.Status.MachineDeploymentRevision != "1" || osc.Status.MachineDeploymentRevision != "1" {
		t.Errorf("the answer was rendered from profile %+v, revision %q; the OSC says %+v, revision %q",
			p, answer.Status.MachineDeploymentRevision, osc.Status.Profile, osc.Status.MachineDeploymentRevision)
	}
	if left := time.Until(answer.Status.ExpirationTimestamp.Time); left > time.Hour+time.Minute || left < 50*time.Minute {
		t.Errorf("the join credential expires in %s, want the default 1h", left)
	}
	join := joinToken(t, answer)
	machine := nodejoin.MachineKey{Namespace: ns, Name: "pool-5d8f7-x2k4q"}
	user := whoAmI(t, join)
	if want := "system:serviceaccount:" + nodejoin.Namespace + ":" + nodejoin.AccountName(machine); user.Username != want {
		t.Errorf("the join credential is %q, want %q", user.Username, want)
	}
	if slices.ContainsFunc(user.Groups, func(g string) bool { return strings.HasPrefix(g, "system:bootstrappers") }) {
		t.Errorf("the join credential is in groups %v", user.Groups)
	}

	if _, err := joinAs(t, token, ns, "pool-5d8f7-x2k4q", "boot-a"); err != nil {
		t.Errorf("the same boot again, within the retry window: %v", err)
	}
	refused(t, "another boot", errOf(joinAs(t, token, ns, "pool-5d8f7-x2k4q", "boot-b")), "for another boot; it is answered once")
	refused(t, "an unknown machine", errOf(joinAs(t, token, ns, "pool-5d8f7-nope", "boot-a")), "there is no machine "+ns+"/pool-5d8f7-nope")
	refused(t, "a machine of another MD", errOf(joinAs(t, token, ns, "other-5d8f7-abcde", "boot-a")), "does not belong to machinedeployment "+ns+"/pool")
	refused(t, "another MD's credential", errOf(joinAs(t, otherToken, ns, "pool-5d8f7-x2k4q", "boot-a")), "does not belong to machinedeployment "+ns+"/other")
	refused(t, "a machine with a node", errOf(joinAs(t, token, ns, "pool-5d8f7-joined", "boot-a")), "has joined as node pool-5d8f7-joined")
	refused(t, "another namespace", errOf(joinAs(t, token, testNamespace, "pool-5d8f7-x2k4q", "boot-a")), "joins machines in namespace "+ns+" only")

	foreign, err := kubeletCSR(t, join, "kube-apiserver-of-someone")
	if err != nil {
		t.Fatalf("the join credential cannot create a CSR: %v", err)
	}
	if c := csrDecision(t, foreign); c.Type != certificatesv1.CertificateDenied || c.Reason != nodejoin.ReasonForeignNodeName {
		t.Errorf("CSR for another node name: %s %s: %s", c.Type, c.Reason, c.Message)
	} else {
		t.Logf("CSR for another name: %s: %s", c.Reason, c.Message)
	}
	own, err := kubeletCSR(t, join, "pool-5d8f7-x2k4q")
	if err != nil {
		t.Fatal(err)
	}
	if c := csrDecision(t, own); c.Type != certificatesv1.CertificateApproved || c.Reason != nodejoin.ReasonApproved {
		t.Errorf("CSR for the machine's own node: %s %s: %s", c.Type, c.Reason, c.Message)
	}
	// A join gets one certificate: whoever holds the credential cannot keep
	// a second node identity beside the real node's.
	again, err := kubeletCSR(t, join, "pool-5d8f7-x2k4q")
	if err != nil {
		t.Fatal(err)
	}
	if c := csrDecision(t, again); c.Type != certificatesv1.CertificateDenied || c.Reason != nodejoin.ReasonCertificateIssued {
		t.Errorf("a second CSR for the machine's own node: %s %s: %s", c.Type, c.Reason, c.Message)
	} else {
		t.Logf("a second CSR for the own name: %s: %s", c.Reason, c.Message)
	}

	createNode(t, "pool-5d8f7-x2k4q")
	eventually(t, 30*time.Second, func() error {
		_, err := env.kube.CoreV1().Secrets(nodejoin.Namespace).Get(ctx, nodejoin.AccountName(machine), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("join credential of %s still there", machine)
	})
	// kube-apiserver caches a successful token authentication for 10 s.
	eventually(t, 30*time.Second, func() error { return revoked(t, join) })
	if _, err := env.kube.CoreV1().ServiceAccounts(nodejoin.Namespace).Get(ctx, nodejoin.AccountName(machine), metav1.GetOptions{}); err != nil {
		t.Errorf("the join identity (the record that the machine was answered) went: %v", err)
	}
	refused(t, "after the join", errOf(joinAs(t, token, ns, "pool-5d8f7-x2k4q", "boot-a")), "has joined as node pool-5d8f7-x2k4q")
	if _, err := kubeletCSR(t, join, "pool-5d8f7-x2k4q"); !apierrors.IsUnauthorized(err) {
		t.Errorf("a CSR with the join credential after the join: %v, want 401", err)
	}
}

// checkNoCompatibilityObjects: an MD whose nodes join through MachineJoins has
// no kubelet bootstrap token, kubeconfig or provisioning Secret, nor a fetch
// Role or RoleBinding.
func checkNoCompatibilityObjects(t *testing.T, ref machinecontroller.Ref) {
	t.Helper()
	ctx := testContext(t)
	settings := machinecontroller.CloudInitSettingsNamespace
	list, err := env.kube.CoreV1().Secrets(tokens.Namespace).List(ctx, metav1.ListOptions{LabelSelector: ref.Selector().String()})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) > 0 {
		t.Errorf("MD %s has %d bootstrap tokens", ref, len(list.Items))
	}
	for _, name := range []string{
		machinecontroller.SecretName(ref.Name, ref.Namespace, osm.PayloadTypeProvisioning),
		machinecontroller.KubeletBootstrapSecretName(ref.Name, ref.Namespace),
	} {
		if _, err := env.kube.CoreV1().Secrets(settings).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("secret %s/%s: %v, want none", settings, name, err)
		}
	}
	if _, err := env.kube.RbacV1().Roles(settings).Get(ctx, tokens.FetchAccessName(ref), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("role %s: %v, want none", tokens.FetchAccessName(ref), err)
	}
	if _, err := env.kube.RbacV1().RoleBindings(settings).Get(ctx, tokens.FetchAccessName(ref), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("role binding %s: %v, want none", tokens.FetchAccessName(ref), err)
	}
}

// A boot that sent its secret with its MachineJoin is answered again only
// with that secret: its boot id, which reports and logs show, is not enough
// for whoever holds a leaked user-data, and only that boot reports the
// machine. The secret is kept nowhere but on the node: neither the answer,
// the join identity nor the boot report holds it.
func TestMachineJoinRetryNeedsTheBootSecret(t *testing.T) {
	ns := syncerNamespace(t)
	ms := joinMD(t, ns, "pool")
	createMachine(t, ms, "pool-5d8f7-s3crt")
	token := userDataToken(t, ns, "pool")
	secret := "3f2a9c1e7b5d4a6f8e0c2b4d6f8a0c1e"
	boot := osmv1alpha1.MachineJoinSpec{BootID: "0f3c2a4e-9b1d-4c55-8f0e-2d6b7a9c1e3f", BootSecret: secret}
	answer, err := joinAsBoot(t, token, ns, "pool-5d8f7-s3crt", boot)
	if err != nil {
		t.Fatalf("MachineJoin: %v", err)
	}
	if answer.Spec.BootSecret != "" {
		t.Error("the answer gives the boot secret back")
	}
	sa, err := env.kube.CoreV1().ServiceAccounts(nodejoin.Namespace).Get(testContext(t), nodejoin.AccountName(nodejoin.MachineKey{Namespace: ns, Name: "pool-5d8f7-s3crt"}), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range sa.Annotations {
		if strings.Contains(v, secret) {
			t.Errorf("the join identity's annotation %s holds the boot secret", k)
		}
	}
	refused(t, "the boot id without the secret", errOf(joinAsBoot(t, token, ns, "pool-5d8f7-s3crt", osmv1alpha1.MachineJoinSpec{BootID: boot.BootID})),
		"for another boot; it is answered once")
	refused(t, "the boot id with another secret", errOf(joinAsBoot(t, token, ns, "pool-5d8f7-s3crt",
		osmv1alpha1.MachineJoinSpec{BootID: boot.BootID, BootSecret: strings.Repeat("ab", 16)})), "for another boot; it is answered once")
	if _, err := joinAsBoot(t, token, ns, "pool-5d8f7-s3crt", boot); err != nil {
		t.Errorf("the same boot with its secret, within the retry window: %v", err)
	}

	// Its boot reports: with the MD's fetch token (in every machine's
	// user-data), only the answered boot's node, with its secret, reports it.
	client := nodeClient(t, token)
	record := func(bootID, bootSecret string) error {
		s := step("packages", osmv1alpha1.StepPhaseStarted, 0, "")
		s.Spec.BootID, s.Spec.BootSecret = bootID, bootSecret
		return report(t, client, ns, "pool-5d8f7-s3crt", s)
	}
	for name, err := range map[string]error{
		"another boot":                    record("another-boot", ""),
		"the boot id without the secret":  record(boot.BootID, ""),
		"the boot id with another secret": record(boot.BootID, strings.Repeat("ab", 16)),
	} {
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "to another boot: only that boot's node reports it") {
			t.Errorf("a step record of %s: %v, want 403", name, err)
		}
	}
	if err := record(boot.BootID, secret); err != nil {
		t.Fatalf("a step record of the answered boot: %v", err)
	}
	r := bootReport(t, ns, "pool-5d8f7-s3crt", inState(osmv1alpha1.BootStateProvisioning))
	if r.Spec.BootID != boot.BootID {
		t.Errorf("report of boot %q, want %q", r.Spec.BootID, boot.BootID)
	}
	secrets, err := env.kube.CoreV1().Secrets(bootreports.Namespace).List(testContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		for k, v := range s.Data {
			if strings.Contains(string(v), secret) {
				t.Errorf("report Secret %s keeps the boot secret in %s", s.Name, k)
			}
		}
	}
}

func errOf(_ *osmv1alpha1.MachineJoin, err error) error { return err }

// A profile written for upstream OSM (it reads the MD's Secrets with .Token)
// keeps working in the compatibility mode, and the OSC and an Event say what
// its nodes read, and that it is weaker.
func TestCompatibilityModeIsStated(t *testing.T) {
	ns := syncerNamespace(t)
	osp := "e2e-compat-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	createMD(t, syncerMD(ns, "legacy", osp, "1"))
	if mode := nodeJoinMode(t, ns, "legacy"); mode != osmv1alpha1.NodeJoinCompatibility {
		t.Errorf("status.nodeJoin.mode %q, want Compatibility", mode)
	}
	payloadSecret(t, ns, "legacy", "provisioning", annotated("1", "v1.0.0"))
	kubeletToken(t, ns, "legacy") // the MD's kubelet bootstrap kubeconfig is there
	eventually(t, time.Minute, func() error {
		events, err := env.kube.CoreV1().Events(ns).List(testContext(t), metav1.ListOptions{FieldSelector: "involvedObject.name=legacy"})
		if err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == "CompatibilityMode" && e.Type == "Warning" && strings.Contains(e.Message, "any node name") {
				return nil
			}
		}
		return fmt.Errorf("no Warning CompatibilityMode Event on machinedeployment %s/legacy among %d", ns, len(events.Items))
	})
}
