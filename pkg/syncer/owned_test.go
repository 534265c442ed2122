package syncer

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

const settings = machinecontroller.CloudInitSettingsNamespace

// What the syncer keeps for an MD, deleted by someone else, is back without
// waiting for the resync (10 minutes here).
func TestDeletedFetchCredentialIsRestoredFromWatches(t *testing.T) {
	ref := machinecontroller.Ref{Namespace: "kube-system", Name: "workers"}
	name := tokens.FetchAccessName(ref)
	deletes := map[string]struct {
		del    func(*harness) error
		exists func(*harness) error
	}{
		"role": {
			del: func(h *harness) error {
				return h.client.RbacV1().Roles(settings).Delete(ctx, name, metav1.DeleteOptions{})
			},
			exists: func(h *harness) error {
				_, err := h.client.RbacV1().Roles(settings).Get(ctx, name, metav1.GetOptions{})
				return err
			},
		},
		"role binding": {
			del: func(h *harness) error {
				return h.client.RbacV1().RoleBindings(settings).Delete(ctx, name, metav1.DeleteOptions{})
			},
			exists: func(h *harness) error {
				_, err := h.client.RbacV1().RoleBindings(settings).Get(ctx, name, metav1.GetOptions{})
				return err
			},
		},
		"service account": {
			del: func(h *harness) error {
				return h.client.CoreV1().ServiceAccounts(tokens.FetchNamespace).Delete(ctx, name, metav1.DeleteOptions{})
			},
			exists: func(h *harness) error {
				_, err := h.client.CoreV1().ServiceAccounts(tokens.FetchNamespace).Get(ctx, name, metav1.GetOptions{})
				return err
			},
		},
		"fetch token": {
			del: func(h *harness) error {
				return h.client.CoreV1().Secrets(tokens.FetchNamespace).Delete(ctx, tokens.FetchTokenSecretName(ref), metav1.DeleteOptions{})
			},
			exists: func(h *harness) error {
				if _, ok := tokens.LookupFetch(h.tokens.FetchLister(), ref); !ok {
					return apierrors.NewNotFound(corev1.Resource("secrets"), tokens.FetchTokenSecretName(ref))
				}
				return nil
			},
		},
	}
	for what, tc := range deletes {
		t.Run(what, func(t *testing.T) {
			h := start(t, nil)
			h.osps.Add(profile("osp-ubuntu", "v1"))
			h.mds.Add(machineDeployment("workers", "osp-ubuntu", "1"))
			h.waitPayloads("workers", "v1", "1")
			if err := tc.del(h); err != nil {
				t.Fatal(err)
			}
			h.eventually(what+" restored", func() (bool, error) { return tc.exists(h) == nil, nil })
		})
	}
}

// Fetch tokens of earlier versions were bootstrap tokens in a group a
// cluster may bind to node bootstrapping: the syncer revokes them.
func TestBootstrapFetchTokenOfEarlierVersionsIsRevoked(t *testing.T) {
	h := start(t, nil)
	ref := machinecontroller.Ref{Namespace: "kube-system", Name: "workers"}
	// Made as earlier versions made it.
	old := &tokens.Manager{Client: h.client, Cache: h.tokens.Index(), TTL: time.Hour, RenewBefore: time.Minute}
	legacy, err := old.Ensure(ctx, tokens.Request{Ref: ref, Purpose: tokens.PurposeFetch, Groups: "system:bootstrappers:osm:md-" + ref.Hash()})
	if err != nil {
		t.Fatal(err)
	}
	h.osps.Add(profile("osp-ubuntu", "v1"))
	h.mds.Add(machineDeployment("workers", "osp-ubuntu", "1"))
	h.waitPayloads("workers", "v1", "1")
	h.eventually("the bootstrap fetch token deleted", func() (bool, error) {
		_, err := h.secret("kube-system", legacy.SecretName())
		return apierrors.IsNotFound(err), nil
	})
}

// A deleted cloud-init-settings comes back with the syncer's own access to it
// and everything of every MD; while it is being deleted nothing is written.
func TestDeletedNamespaceIsRecreated(t *testing.T) {
	h := start(t, nil)
	h.osps.Add(profile("osp-ubuntu", "v1"))
	h.mds.Add(machineDeployment("workers", "osp-ubuntu", "1"))
	h.waitPayloads("workers", "v1", "1")
	h.eventually("the syncer's access", func() (bool, error) { return h.ownAccess() == nil, nil })

	// Terminating: what the namespace controller does first.
	ns, err := h.client.CoreV1().Namespaces().Get(ctx, settings, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if _, err := h.client.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.eventually("the syncer to see the namespace terminate", func() (bool, error) { return !h.controller.namespaceReady.Load(), nil })
	h.mds.Add(machineDeployment("later", "osp-ubuntu", "1"))
	time.Sleep(300 * time.Millisecond) // A sync of "later" would write at once.
	if _, err := h.payload("later", osm.PayloadTypeBootstrap); !apierrors.IsNotFound(err) {
		t.Errorf("payload written into a terminating namespace: %v", err)
	}

	// Then its contents go, and the namespace.
	for _, del := range []func() error{
		func() error {
			return h.client.RbacV1().RoleBindings(settings).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		},
		func() error {
			return h.client.RbacV1().Roles(settings).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		},
		func() error {
			return h.client.CoreV1().Secrets(settings).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		},
		func() error {
			return h.client.CoreV1().ServiceAccounts(settings).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		},
		func() error { return h.client.CoreV1().Namespaces().Delete(ctx, settings, metav1.DeleteOptions{}) },
	} {
		if err := del(); err != nil {
			t.Fatal(err)
		}
	}
	h.eventually("the syncer's access", func() (bool, error) { return h.ownAccess() == nil, nil })
	for _, md := range []string{"workers", "later"} {
		h.waitPayloads(md, "v1", "1")
		ref := machinecontroller.Ref{Namespace: "kube-system", Name: md}
		h.eventually("fetch access of "+md, func() (bool, error) {
			_, err1 := h.client.RbacV1().Roles(settings).Get(ctx, tokens.FetchAccessName(ref), metav1.GetOptions{})
			_, err2 := h.client.RbacV1().RoleBindings(settings).Get(ctx, tokens.FetchAccessName(ref), metav1.GetOptions{})
			_, err3 := h.client.CoreV1().ServiceAccounts(tokens.FetchNamespace).Get(ctx, tokens.FetchAccessName(ref), metav1.GetOptions{})
			_, ok := tokens.LookupFetch(h.tokens.FetchLister(), ref)
			return err1 == nil && err2 == nil && err3 == nil && ok, nil
		})
	}
}

// ownAccess checks the syncer's own RoleBinding in cloud-init-settings.
func (h *harness) ownAccess() error {
	b, err := h.client.RbacV1().RoleBindings(settings).Get(ctx, AccessRoleBinding, metav1.GetOptions{})
	if err != nil {
		return err
	}
	want := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: "osm-apiserver"}
	if b.RoleRef.Kind != "ClusterRole" || b.RoleRef.Name != AccessClusterRole || len(b.Subjects) != 1 || b.Subjects[0] != want {
		h.t.Fatalf("role binding %s binds %+v to %+v, want %s to %+v", b.Name, b.RoleRef, b.Subjects, AccessClusterRole, want)
	}
	return nil
}

func TestSubjectOf(t *testing.T) {
	for user, want := range map[string]*rbacv1.Subject{
		"system:serviceaccount:kube-system:osm-apiserver": {Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: "osm-apiserver"},
		"kubernetes-admin": {APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "kubernetes-admin"},
		"":                 nil,
	} {
		got := subjectOf(user)
		if (got == nil) != (want == nil) || (got != nil && *got != *want) {
			t.Errorf("subjectOf(%q) = %+v, want %+v", user, got, want)
		}
	}
}

// The syncer's own RoleBinding deleted (not the namespace): the first write
// refused for it brings it back.
func TestDeletedOwnAccessIsRestored(t *testing.T) {
	h := start(t, nil)
	h.osps.Add(profile("osp-ubuntu", "v1"))
	h.mds.Add(machineDeployment("workers", "osp-ubuntu", "1"))
	h.waitPayloads("workers", "v1", "1")
	h.eventually("the syncer's access", func() (bool, error) { return h.ownAccess() == nil, nil })
	// As RBAC would: no Secrets written in cloud-init-settings without the binding.
	h.client.PrependReactor("*", "secrets", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if v := action.GetVerb(); action.GetNamespace() != settings || (v != "create" && v != "update") {
			return false, nil, nil
		}
		if _, err := h.client.Tracker().Get(rbacv1.SchemeGroupVersion.WithResource("rolebindings"), settings, AccessRoleBinding); err != nil {
			return true, nil, apierrors.NewForbidden(corev1.Resource("secrets"), "", errors.New("no access"))
		}
		return false, nil, nil
	})
	if err := h.client.RbacV1().RoleBindings(settings).Delete(ctx, AccessRoleBinding, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.client.CoreV1().Secrets(settings).Delete(ctx, machinecontroller.SecretName("workers", "kube-system", osm.PayloadTypeBootstrap), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.eventually("the syncer's access", func() (bool, error) { return h.ownAccess() == nil, nil })
	h.waitPayloads("workers", "v1", "1")
}

// The namespace of the machines' join identities is kept like
// cloud-init-settings, with the syncer's access there, without holding up
// the MachineDeployments.
func TestJoinNamespaceIsKept(t *testing.T) {
	h := start(t, nil)
	check := func() (bool, error) {
		if _, err := h.client.CoreV1().Namespaces().Get(ctx, nodejoin.Namespace, metav1.GetOptions{}); err != nil {
			return false, nil
		}
		b, err := h.client.RbacV1().RoleBindings(nodejoin.Namespace).Get(ctx, nodejoin.AccessRoleBinding, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return b.RoleRef.Name == nodejoin.AccessClusterRole && len(b.Subjects) == 1 && b.Subjects[0].Name == "osm-apiserver", nil
	}
	h.eventually("namespace "+nodejoin.Namespace+" and the access there", check)
	if err := h.client.CoreV1().Namespaces().Delete(ctx, nodejoin.Namespace, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.client.RbacV1().RoleBindings(nodejoin.Namespace).Delete(ctx, nodejoin.AccessRoleBinding, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.eventually("namespace "+nodejoin.Namespace+" restored", check)
}
