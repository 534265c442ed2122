package syncer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// The syncer's own access to cloud-init-settings (and to the namespace of the
// join identities) is a RoleBinding there of a ClusterRole (artifacts/deploy):
// deleting the namespace deletes the binding but not the role, and the
// syncer, allowed to create namespaces and to bind those ClusterRoles,
// recreates both.
const (
	// AccessClusterRole holds what the syncer may do in cloud-init-settings.
	AccessClusterRole = "osm-apiserver:syncer-cloud-init-settings"
	// AccessRoleBinding binds AccessClusterRole to the syncer there.
	AccessRoleBinding = "osm-apiserver:syncer-cloud-init-settings"
	// FetchAccessClusterRole holds what the syncer may do in
	// tokens.FetchNamespace (the fetch tokens' ServiceAccounts and Secrets);
	// FetchAccessRoleBinding binds it there.
	FetchAccessClusterRole = "osm-apiserver:syncer-fetch"
	FetchAccessRoleBinding = "osm-apiserver:syncer-fetch"
)

// managedNamespace is a namespace the syncer keeps, with its own access
// there: a RoleBinding of a ClusterRole it may bind.
type managedNamespace struct {
	name, binding, role string
	// mds says that MachineDeployments are synced only while it is usable.
	mds bool
	// requeue says every MachineDeployment is synced again once the
	// syncer's access there is restored: they write there, but do not wait
	// for it (a write that fails is retried with backoff).
	requeue bool
}

// managedNamespaces: cloud-init-settings (payloads, the compatibility mode's
// fetch Roles), the namespace of the fetch tokens, and the namespace of the
// machines' join identities, which every replica writes when it answers a
// MachineJoin.
var managedNamespaces = []managedNamespace{
	{name: machinecontroller.CloudInitSettingsNamespace, binding: AccessRoleBinding, role: AccessClusterRole, mds: true},
	{name: tokens.FetchNamespace, binding: FetchAccessRoleBinding, role: FetchAccessClusterRole, requeue: true},
	{name: nodejoin.Namespace, binding: nodejoin.AccessRoleBinding, role: nodejoin.AccessClusterRole},
}

// namespaceWaitRetry is how soon a namespace that is being deleted is looked
// at again; its deletion event also wakes the syncer.
const namespaceWaitRetry = time.Second

// runNamespace keeps the managed namespaces and the syncer's access to them
// until ctx ends. It runs beside the MachineDeployment workers and before
// them: the informers of cloud-init-settings' contents cannot list without
// that access.
func (c *Controller) runNamespace(ctx context.Context) {
	if !cache.WaitForNamedCacheSync("osm-syncer-namespace", ctx.Done(), c.owned.namespacesSynced) {
		return
	}
	drain(ctx, c.namespaceQueue, "Failed to restore the namespace", func(ctx context.Context, key string) (time.Duration, error) {
		i := slices.IndexFunc(managedNamespaces, func(m managedNamespace) bool { return m.name == key })
		if i < 0 {
			return 0, nil
		}
		return c.syncNamespace(ctx, managedNamespaces[i])
	})
}

// syncNamespace creates m when it is missing and binds the syncer's access
// there. For cloud-init-settings, once the namespace is usable, every
// MachineDeployment is synced again; while it is being deleted, syncs of
// MachineDeployments wait: nothing can be created in it.
func (c *Controller) syncNamespace(ctx context.Context, m managedNamespace) (retry time.Duration, err error) {
	ns, err := c.owned.namespaces(m.name).Get(m.name)
	switch {
	case apierrors.IsNotFound(err):
		c.setNamespaceReady(m, false)
		_, err = c.cfg.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: m.name}}, metav1.CreateOptions{})
		switch {
		case apierrors.IsAlreadyExists(err):
			// Our cache is behind, or it is being deleted: its events follow.
			return namespaceWaitRetry, nil
		case err != nil:
			return 0, fmt.Errorf("failed to create namespace %s: %w", m.name, err)
		}
		klog.FromContext(ctx).Info("Created namespace", "namespace", m.name)
	case err != nil:
		return 0, err
	case ns.DeletionTimestamp != nil:
		c.setNamespaceReady(m, false)
		return namespaceWaitRetry, nil
	}
	// A failure to bind the syncer's access is retried, but does not hold up
	// the MDs: the syncer may have access granted otherwise.
	restored, err := c.ensureOwnAccess(ctx, m)
	if m.mds && (!c.namespaceReady.Swap(true) || restored) || m.requeue && restored {
		c.enqueueAll()
	}
	if m.mds && err == nil {
		err = c.removeLegacyFetch(ctx)
	}
	return 0, err
}

// removeLegacyFetch deletes, once per term, the fetch tokens' Secrets and
// ServiceAccounts that versions before tokens.FetchNamespace kept in
// cloud-init-settings, where whoever reads its Secrets (upstream OSM's getter
// token) would read them. A VM still booting with such a token cannot post
// its MachineJoin any more (osm-apiserver takes fetch credentials of
// tokens.FetchNamespace only).
func (c *Controller) removeLegacyFetch(ctx context.Context) error {
	if c.legacyFetchRemoved {
		return nil
	}
	ns := machinecontroller.CloudInitSettingsNamespace
	fetch := labels.SelectorFromSet(labels.Set{machinecontroller.ManagedByLabel: machinecontroller.ManagedByValue}).String()
	secrets, err := c.cfg.Client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: fetch + "," + machinecontroller.PurposeLabel + "=" + tokens.PurposeFetch})
	if err != nil {
		return fmt.Errorf("failed to list earlier versions' fetch token secrets in %s: %w", ns, err)
	}
	for _, s := range secrets.Items {
		if s.Type != tokens.SecretTypeFetchToken {
			continue
		}
		err := c.cfg.Client.CoreV1().Secrets(ns).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("failed to delete earlier version's fetch token secret %s/%s: %w", ns, s.Name, err)
		}
	}
	accounts, err := c.cfg.Client.CoreV1().ServiceAccounts(ns).List(ctx, metav1.ListOptions{LabelSelector: fetch + "," + machinecontroller.PurposeLabel + "=" + tokens.PurposeFetchAccess})
	if err != nil {
		return fmt.Errorf("failed to list earlier versions' fetch service accounts in %s: %w", ns, err)
	}
	for _, a := range accounts.Items {
		err := c.cfg.Client.CoreV1().ServiceAccounts(ns).Delete(ctx, a.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &a.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("failed to delete earlier version's fetch service account %s/%s: %w", ns, a.Name, err)
		}
	}
	if n := len(secrets.Items) + len(accounts.Items); n > 0 {
		klog.FromContext(ctx).Info("Deleted earlier versions' fetch credentials", "namespace", ns, "objects", n)
	}
	c.legacyFetchRemoved = true
	return nil
}

func (c *Controller) setNamespaceReady(m managedNamespace, ready bool) {
	if m.mds {
		c.namespaceReady.Store(ready)
	}
}

// ensureOwnAccess binds m's ClusterRole to the syncer in m unless a binding
// of that name exists; restored says it created one. A syncer not allowed to
// bind it (a deployment granting its access otherwise) carries on without.
func (c *Controller) ensureOwnAccess(ctx context.Context, m managedNamespace) (restored bool, err error) {
	subject, err := c.self(ctx)
	if err != nil || subject == nil {
		return false, err
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{
			Name:      m.binding,
			Namespace: m.name,
			Labels:    map[string]string{"app.kubernetes.io/name": "osm-apiserver"},
		},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: m.role},
		Subjects: []rbacv1.Subject{*subject},
	}
	_, err = c.cfg.Client.RbacV1().RoleBindings(binding.Namespace).Create(ctx, binding, metav1.CreateOptions{})
	switch {
	case err == nil:
		klog.FromContext(ctx).Info("Restored the syncer's access", "roleBinding", klog.KObj(binding), "subject", subject.Name)
		return true, nil
	case apierrors.IsForbidden(err):
		klog.FromContext(ctx).V(2).Info("Not allowed to bind the syncer's access role, relying on access granted otherwise",
			"roleBinding", klog.KObj(binding), "err", err.Error())
	case !apierrors.IsAlreadyExists(err):
		return false, fmt.Errorf("failed to create role binding %s/%s: %w", binding.Namespace, binding.Name, err)
	}
	return false, nil
}

// self returns the RBAC subject the syncer authenticates as, from a
// SelfSubjectReview; nil when the cluster does not say. Only the namespace
// worker calls it.
func (c *Controller) self(ctx context.Context) (*rbacv1.Subject, error) {
	if c.selfKnown {
		return c.selfSubject, nil
	}
	review, err := c.cfg.Client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to find out who the syncer is: %w", err)
	}
	c.selfSubject, c.selfKnown = subjectOf(review.Status.UserInfo.Username), true
	return c.selfSubject, nil
}

// subjectOf is the RBAC subject of a user name; nil for none.
func subjectOf(username string) *rbacv1.Subject {
	if username == "" {
		return nil
	}
	if rest, ok := strings.CutPrefix(username, "system:serviceaccount:"); ok {
		if ns, name, ok := strings.Cut(rest, ":"); ok {
			return &rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
		}
	}
	return &rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: username}
}
