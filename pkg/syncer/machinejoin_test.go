package syncer

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fcache "k8s.io/client-go/tools/cache/testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/machines"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// compatibilityObjects says which of the objects only the compatibility mode
// needs ref has: its kubelet bootstrap token, kubeconfig and provisioning
// Secrets, fetch Role and RoleBinding.
func (h *harness) compatibilityObjects(ref machinecontroller.Ref) []string {
	h.t.Helper()
	var have []string
	list, err := h.client.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{LabelSelector: machinecontroller.PurposeLabel + "=" + tokens.PurposeKubelet})
	if err != nil {
		h.t.Fatal(err)
	}
	if len(list.Items) > 0 {
		have = append(have, "kubelet bootstrap token")
	}
	for _, name := range []string{
		machinecontroller.KubeletBootstrapSecretName(ref.Name, ref.Namespace),
		machinecontroller.SecretName(ref.Name, ref.Namespace, osm.PayloadTypeProvisioning),
	} {
		if _, err := h.secret(machinecontroller.CloudInitSettingsNamespace, name); err == nil {
			have = append(have, "secret "+name)
		}
	}
	if _, err := h.client.RbacV1().Roles(machinecontroller.CloudInitSettingsNamespace).Get(ctx, tokens.FetchAccessName(ref), metav1.GetOptions{}); err == nil {
		have = append(have, "role")
	}
	if _, err := h.client.RbacV1().RoleBindings(machinecontroller.CloudInitSettingsNamespace).Get(ctx, tokens.FetchAccessName(ref), metav1.GetOptions{}); err == nil {
		have = append(have, "role binding")
	}
	return have
}

// An MD whose profile posts a MachineJoin gets its fetch credential and its
// bootstrap Secret, and nothing else: the exchange answers with the
// provisioning payload and the kubelet's bootstrap kubeconfig.
func TestMachineJoinWritesBootstrapAndFetchCredentialOnly(t *testing.T) {
	h := start(t, nil)
	h.osps.Add(profile("osp-ubuntu", "join-v1"))
	h.mds.Add(machineDeployment("workers", "osp-ubuntu", "1"))
	ref := machinecontroller.Ref{Namespace: "kube-system", Name: "workers"}
	var bootstrap *corev1.Secret
	h.eventually("bootstrap secret", func() (bool, error) {
		var err error
		bootstrap, err = h.payload("workers", osm.PayloadTypeBootstrap)
		return err == nil, nil
	})
	fetch, ok := tokens.LookupFetch(h.tokens.FetchLister(), ref)
	if !ok || !strings.Contains(string(bootstrap.Data[machinecontroller.SecretDataKey]), "fetch="+fetch) {
		t.Errorf("the bootstrap payload does not hold the fetch token")
	}
	if have := h.compatibilityObjects(ref); len(have) > 0 {
		t.Errorf("a MachineJoin MD has %v", have)
	}
	select {
	case e := <-h.recorder.Events:
		t.Errorf("event %q for an MD that joins through MachineJoin", e)
	default:
	}
}

// An MD in the compatibility mode says so, once, in a Warning Event.
func TestCompatibilityModeWarnsOnce(t *testing.T) {
	h := start(t, nil)
	h.osps.Add(profile("osp-ubuntu", "v1"))
	h.mds.Add(machineDeployment("workers", "osp-ubuntu", "1"))
	e := h.waitEvent("Warning " + ReasonCompatibilityMode)
	for _, want := range []string{"kube-system/osp-ubuntu@v1", "kubelet bootstrap kubeconfig", "any node name"} {
		if !strings.Contains(e, want) {
			t.Errorf("event %q does not say %q", e, want)
		}
	}
	h.waitPayloads("workers", "v1", "1")
	annotateAndWait := func(revision string) {
		md := machineDeployment("workers", "osp-ubuntu", revision)
		h.mds.Modify(md)
		h.waitPayloads("workers", "v1", revision)
	}
	annotateAndWait("2")
	select {
	case e := <-h.recorder.Events:
		t.Errorf("another event %q for the same profile revision", e)
	default:
	}
}

// When an MD's profile switches to MachineJoin, what the compatibility mode
// wrote stays while one of its Machines has no Node — it boots with the
// user-data of before, which reads them — and goes once every Machine joined.
func TestSwitchToMachineJoinKeepsCompatibilityObjectsUntilMachinesJoined(t *testing.T) {
	machineSource := fcache.NewFakeControllerSource()
	sets := fcache.NewFakeControllerSource()
	t.Cleanup(func() { machineSource.Shutdown(); sets.Shutdown() })
	machineInformer := informers.NewMachines(machineSource)
	setInformer := informers.NewMachineSets(sets)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go machineInformer.Run(stop)
	go setInformer.Run(stop)
	h := start(t, func(cfg *Config) {
		cfg.Machines = machines.NewMachineReader(machineInformer.GetIndexer(), setInformer.GetIndexer(), nil)
		cfg.MachineInformer = machineInformer
	})
	md := machineDeployment("workers", "osp-ubuntu", "1")
	ms := machinecontrollertest.MachineSet(md, "workers-5d8f7")
	machine := machinecontrollertest.Machine(ms, "workers-5d8f7-x2k4q")
	sets.Add(ms)
	machineSource.Add(machine)
	h.eventually("informers", func() (bool, error) {
		return len(machineInformer.GetIndexer().ListKeys()) == 1 && len(setInformer.GetIndexer().ListKeys()) == 1, nil
	})
	h.osps.Add(profile("osp-ubuntu", "v1"))
	h.mds.Add(md)
	h.waitPayloads("workers", "v1", "1")
	ref := machinecontroller.RefOf(md)
	if have := h.compatibilityObjects(ref); len(have) != 5 {
		t.Fatalf("compatibility mode: %v", have)
	}

	h.osps.Modify(profile("osp-ubuntu", "join-v2"))
	h.eventually("bootstrap of the new profile", func() (bool, error) {
		s, err := h.payload("workers", osm.PayloadTypeBootstrap)
		return err == nil && s.Annotations[machinecontroller.AnnotationSecretOSPVersion] == "join-v2", nil
	})
	if have := h.compatibilityObjects(ref); len(have) != 5 {
		t.Errorf("with a machine still joining: %v, want all five kept", have)
	}

	joined := machine.DeepCopy()
	joined.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: machine.Name}
	machineSource.Modify(joined)
	h.eventually("compatibility objects gone", func() (bool, error) {
		return len(h.compatibilityObjects(ref)) == 0, nil
	})
	if _, err := h.client.CoreV1().ServiceAccounts(tokens.FetchNamespace).Get(ctx, tokens.FetchAccessName(ref), metav1.GetOptions{}); err != nil {
		t.Errorf("fetch service account: %v", err)
	}
	if _, err := h.payload("workers", osm.PayloadTypeBootstrap); apierrors.IsNotFound(err) {
		t.Error("the bootstrap secret went too")
	}
}
