package syncer

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

var ctx = context.Background()

func (h *harness) secret(ns, name string) (*corev1.Secret, error) {
	return h.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
}

func (h *harness) payload(md string, kind osm.PayloadType) (*corev1.Secret, error) {
	return h.secret(machinecontroller.CloudInitSettingsNamespace, machinecontroller.SecretName(md, "kube-system", kind))
}

// waitPayloads waits until both payload Secrets of md hold OSP version and revision.
func (h *harness) waitPayloads(md, version, revision string) (bootstrap, provisioning *corev1.Secret) {
	h.t.Helper()
	h.eventually("payload secrets of "+md, func() (bool, error) {
		var err error
		bootstrap, err = h.payload(md, osm.PayloadTypeBootstrap)
		if err != nil {
			return false, nil
		}
		provisioning, err = h.payload(md, osm.PayloadTypeProvisioning)
		if err != nil {
			return false, nil
		}
		for _, s := range []*corev1.Secret{bootstrap, provisioning} {
			if s.Annotations[machinecontroller.AnnotationSecretOSPVersion] != version || s.Annotations[machinecontroller.AnnotationSecretMDRevision] != revision {
				return false, nil
			}
		}
		return true, nil
	})
	return bootstrap, provisioning
}

func TestCreateWritesSecretsTokensAndRBAC(t *testing.T) {
	h := start(t, nil)
	h.osps.Add(profile("osp-ubuntu", "v1"))
	md := machineDeployment("workers", "osp-ubuntu", "3")
	h.mds.Add(md)

	bootstrap, provisioning := h.waitPayloads("workers", "v1", "3")
	ref := machinecontroller.Ref{Namespace: "kube-system", Name: "workers"}
	for _, s := range []*corev1.Secret{bootstrap, provisioning} {
		if s.Type != corev1.SecretTypeOpaque {
			t.Errorf("%s: type %q, want Opaque", s.Name, s.Type)
		}
		if got, want := s.Annotations[machinecontroller.AnnotationSecretMDAnnotationsHash], machinecontroller.AnnotationsHash(md.Annotations); got != want {
			t.Errorf("%s: annotations hash %q, want %q", s.Name, got, want)
		}
		if owner, ok := machinecontroller.Owner(s); !ok || owner != ref {
			t.Errorf("%s: owner %v %v, want %v", s.Name, owner, ok, ref)
		}
	}
	kubelet, ok1 := tokens.Lookup(h.tokenIndex(), ref, tokens.PurposeKubelet)
	fetch, ok2 := tokens.LookupFetch(h.tokens.FetchLister(), ref)
	if !ok1 || !ok2 {
		t.Fatalf("tokens not found: kubelet %v fetch %v", ok1, ok2)
	}
	data := string(bootstrap.Data[machinecontroller.SecretDataKey])
	if !strings.Contains(data, "kubelet="+kubelet.Value()) || !strings.Contains(data, "fetch="+fetch) {
		t.Errorf("bootstrap payload %q does not hold the MD's tokens", data)
	}
	// The fetch token is the MD's ServiceAccount's, bound to its Secret.
	tok, err := tokens.ParseFetchToken(fetch)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fetch, ".") || tok.Expiration.Sub(tok.IssuedAt) != 24*time.Hour {
		t.Errorf("fetch token valid for %v, want 24h", tok.Expiration.Sub(tok.IssuedAt))
	}
	if _, err := h.client.CoreV1().ServiceAccounts(tokens.FetchNamespace).Get(ctx, tokens.FetchAccessName(ref), metav1.GetOptions{}); err != nil {
		t.Errorf("fetch service account: %v", err)
	}
	legacy, _ := h.client.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{LabelSelector: machinecontroller.PurposeLabel + "=" + tokens.PurposeFetch})
	if len(legacy.Items) != 0 {
		t.Errorf("%d fetch tokens in kube-system, want none: bootstrap tokens are for the kubelet only", len(legacy.Items))
	}
	kubeconfig, err := h.secret(machinecontroller.CloudInitSettingsNamespace, machinecontroller.KubeletBootstrapSecretName("workers", "kube-system"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(kubeconfig.Data[machinecontroller.KubeconfigDataKey], []byte(kubelet.Value())) {
		t.Errorf("kubeconfig does not hold the kubelet token:\n%s", kubeconfig.Data[machinecontroller.KubeconfigDataKey])
	}
	role, err := h.client.RbacV1().Roles(machinecontroller.CloudInitSettingsNamespace).Get(ctx, tokens.FetchAccessName(ref), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{provisioning.Name, kubeconfig.Name}
	if r := role.Rules; len(r) != 1 || strings.Join(r[0].Verbs, ",") != "get" || strings.Join(r[0].ResourceNames, ",") != strings.Join(want, ",") {
		t.Errorf("role rules %+v, want get on %v only", role.Rules, want)
	}
	if _, err := h.client.CoreV1().Namespaces().Get(ctx, machinecontroller.CloudInitSettingsNamespace, metav1.GetOptions{}); err != nil {
		t.Errorf("namespace: %v", err)
	}
}

func TestChangesReRender(t *testing.T) {
	h := start(t, nil)
	h.osps.Add(profile("osp-ubuntu", "v1"))
	h.mds.Add(machineDeployment("workers", "osp-ubuntu", "1"))
	h.waitPayloads("workers", "v1", "1")

	// A new OSP version re-renders without any MD event.
	h.osps.Modify(profile("osp-ubuntu", "v2"))
	h.waitPayloads("workers", "v2", "1")

	// So does a new MD revision.
	h.mds.Modify(machineDeployment("workers", "osp-ubuntu", "2"))
	h.waitPayloads("workers", "v2", "2")

	// And a deleted payload Secret is written again.
	if err := h.client.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Delete(ctx,
		machinecontroller.SecretName("workers", "kube-system", osm.PayloadTypeBootstrap), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitPayloads("workers", "v2", "2")
}

func TestBrokenProfileKeepsSecrets(t *testing.T) {
	h := start(t, nil)
	h.osps.Add(profile("osp-ubuntu", "v1"))
	h.osps.Add(profile("osp-other", "v1"))
	h.mds.Add(machineDeployment("workers", "osp-ubuntu", "1"))
	before, _ := h.waitPayloads("workers", "v1", "1")

	h.osps.Modify(profile("osp-ubuntu", "broken-v2"))
	if e := h.waitEvent("Warning RenderFailed"); !strings.Contains(e, "osp-ubuntu: template") {
		t.Errorf("event %q, want a Warning RenderFailed naming the profile", e)
	}
	after, err := h.payload("workers", osm.PayloadTypeBootstrap)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before.Data[machinecontroller.SecretDataKey], after.Data[machinecontroller.SecretDataKey]) || after.ResourceVersion != before.ResourceVersion {
		t.Errorf("bootstrap secret changed after a failed render")
	}

	// Another MD on a good profile is not blocked.
	h.mds.Add(machineDeployment("others", "osp-other", "1"))
	h.waitPayloads("others", "v1", "1")

	// Fixing the profile recovers.
	h.osps.Modify(profile("osp-ubuntu", "v3"))
	h.waitPayloads("workers", "v3", "1")
}

func TestDeleteCleansUp(t *testing.T) {
	h := start(t, nil)
	h.osps.Add(profile("osp-ubuntu", "v1"))
	md := machineDeployment("workers", "osp-ubuntu", "1")
	h.mds.Add(md)
	h.mds.Add(machineDeployment("keep", "osp-ubuntu", "1"))
	h.waitPayloads("workers", "v1", "1")
	h.waitPayloads("keep", "v1", "1")

	h.mds.Delete(md)
	ref := machinecontroller.Ref{Namespace: "kube-system", Name: "workers"}
	h.eventually("cleanup", func() (bool, error) {
		for _, ns := range []string{"kube-system", machinecontroller.CloudInitSettingsNamespace} {
			l, err := h.client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: ref.Selector().String()})
			if err != nil || len(l.Items) > 0 {
				return false, err
			}
		}
		_, err := h.client.RbacV1().Roles(machinecontroller.CloudInitSettingsNamespace).Get(ctx, tokens.FetchAccessName(ref), metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return false, nil
		}
		_, err = h.client.RbacV1().RoleBindings(machinecontroller.CloudInitSettingsNamespace).Get(ctx, tokens.FetchAccessName(ref), metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, err := h.payload("keep", osm.PayloadTypeBootstrap); err != nil {
		t.Errorf("other MD's secret: %v", err)
	}
}

func TestSteadyStateWritesNothing(t *testing.T) {
	h := start(t, func(c *Config) { c.ResyncPeriod = 100 * time.Millisecond })
	h.osps.Add(profile("osp-ubuntu", "v1"))
	h.mds.Add(machineDeployment("workers", "osp-ubuntu", "1"))
	h.waitPayloads("workers", "v1", "1")
	time.Sleep(200 * time.Millisecond) // Let follow-up syncs of our own writes settle.
	writes := func() []string {
		var w []string
		for _, a := range h.client.Actions() {
			if v := a.GetVerb(); v == "create" || v == "update" || v == "delete" {
				w = append(w, v+" "+a.GetResource().Resource)
			}
		}
		return w
	}
	before := len(writes())
	time.Sleep(500 * time.Millisecond) // Several resyncs.
	if after := writes(); len(after) != before {
		t.Errorf("%d writes in steady state: %v", len(after)-before, after[before:])
	}
}

func TestMissingProfileWritesNothingUntilItExists(t *testing.T) {
	h := start(t, nil)
	h.mds.Add(machineDeployment("workers", "osp-later", "1"))
	select {
	case e := <-h.recorder.Events:
		if !strings.HasPrefix(e, "Warning ProfileNotFound") {
			t.Errorf("event %q, want a Warning ProfileNotFound", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no Warning event for the missing profile")
	}
	l, err := h.client.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 0 {
		t.Fatalf("%d tokens created for an MD without a profile (%v)", len(l.Items), err)
	}
	h.osps.Add(profile("osp-later", "v1"))
	h.waitPayloads("workers", "v1", "1")
}

// An MD on cloud provider edge gets its join script in the Secret upstream
// uses, and its fetch token may read its bootstrap payload; the script goes
// when the MD leaves edge.
func TestEdgeScriptSecret(t *testing.T) {
	h := start(t, nil)
	h.osps.Add(profile("osp-ubuntu", "v1"))
	md := machinecontrollertest.OnCloud(machineDeployment("workers", "osp-ubuntu", "1"), "edge")
	h.mds.Add(md)
	name := machinecontroller.EdgeScriptSecretName("workers", "kube-system")
	ref := machinecontroller.Ref{Namespace: "kube-system", Name: "workers"}
	h.eventually("the edge script Secret", func() (bool, error) {
		s, err := h.secret(machinecontroller.CloudInitSettingsNamespace, name)
		if err != nil {
			return false, nil
		}
		script := string(s.Data[machinecontroller.EdgeScriptDataKey])
		if !strings.HasPrefix(script, "#!/bin/bash") {
			return false, fmt.Errorf("script %q", script)
		}
		owner, ok := machinecontroller.Owner(s)
		return ok && owner == ref, nil
	})
	role, err := h.client.RbacV1().Roles(machinecontroller.CloudInitSettingsNamespace).Get(context.Background(), tokens.FetchAccessName(ref), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if bootstrap := machinecontroller.SecretName("workers", "kube-system", osm.PayloadTypeBootstrap); !slices.Contains(role.Rules[0].ResourceNames, bootstrap) {
		t.Errorf("the fetch role of an edge MD does not allow %s: %v", bootstrap, role.Rules[0].ResourceNames)
	}

	moved := machinecontrollertest.OnCloud(machineDeployment("workers", "osp-ubuntu", "1"), "aws")
	moved.ResourceVersion = "2"
	h.mds.Modify(moved)
	h.eventually("the edge script Secret removed", func() (bool, error) {
		_, err := h.secret(machinecontroller.CloudInitSettingsNamespace, name)
		return apierrors.IsNotFound(err), nil
	})
}

// An MD that names no profile is synced with its operating system's default;
// one whose operating system has none gets a Warning Event and nothing.
func TestUnnamedProfileIsDefaulted(t *testing.T) {
	h := start(t, nil)
	h.osps.Add(profile("osp-ubuntu", "v1"))
	unnamed := func(name, os string) *clusterv1alpha1.MachineDeployment {
		md := machineDeployment(name, "", "1")
		md.UID = types.UID("uid-" + name)
		delete(md.Annotations, machinecontroller.AnnotationOSP)
		md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(`{"cloudProvider":"aws","operatingSystem":"` + os + `"}`)}
		return md
	}
	h.mds.Add(unnamed("sles", "sles"))
	select {
	case e := <-h.recorder.Events:
		if !strings.HasPrefix(e, "Warning NoDefaultProfile Kept the previous payload Secrets: machinedeployment kube-system/sles: no OperatingSystemProfile") {
			t.Errorf("event %q, want a Warning NoDefaultProfile", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no Warning event for an MD without a profile")
	}
	h.mds.Add(unnamed("ubuntu", "ubuntu"))
	h.waitPayloads("ubuntu", "v1", "1")
}
