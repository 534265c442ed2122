package nodejoin

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// settleTime is how long after an answer its identity and credential are
// left alone while the caches do not show its Machine or identity yet.
const settleTime = time.Minute

// syncMachine deletes what key no longer needs: its credential (which
// revokes every join token of it) once its Node registered or the credential
// expired, and its join identity too once the Machine is gone. The identity
// stays while the Machine does: it records that the machine was answered, so
// that the exchange refuses it again even once its credential is gone.
func (c *Controller) syncMachine(ctx context.Context, key MachineKey) (time.Duration, error) {
	name := AccountName(key)
	account, accountErr := c.accountLister().ServiceAccounts(Namespace).Get(name)
	credential, credentialErr := c.credentialLister().Secrets(Namespace).Get(name)
	if accountErr != nil && credentialErr != nil {
		return 0, nil
	}
	logger := klog.FromContext(ctx).WithValues("machine", klog.KRef(key.Namespace, key.Name))
	m, err := c.cfg.Machines.Get(key.Namespace, key.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	rec, ok := Record{}, false
	if accountErr == nil {
		rec, ok = ParseRecord(account)
	}
	// What one informer shows may be ahead of another: an identity of a
	// Machine this cache has not seen yet, a credential whose identity it has
	// not seen yet. They are taken for leftovers only after a while.
	switch {
	case ok && (err != nil || m.UID != rec.MachineUID):
		if wait := time.Until(rec.AnsweredAt.Add(c.settle)); wait > 0 {
			return wait, nil
		}
		logger.V(2).Info("Machine gone, deleting its join identity")
		return 0, errors.Join(c.delete(ctx, credential, credentialErr), c.deleteAccount(ctx, account, accountErr))
	case !ok && credentialErr != nil:
		return 0, nil // an account of Namespace that is no join identity
	case !ok:
		// A credential without its identity has nothing to give.
		if wait := time.Until(credential.CreationTimestamp.Add(c.settle)); wait > 0 {
			return wait, nil
		}
		return 0, c.delete(ctx, credential, nil)
	case credentialErr != nil:
		return 0, nil
	}
	if node, joined := c.cfg.Machines.NodeOf(m); joined {
		logger.Info("Machine joined, revoking its join credential", "node", node)
		return 0, c.delete(ctx, credential, nil)
	}
	if left := time.Until(rec.AnsweredAt.Add(max(c.cfg.TTL, minTokenTTL))); left > 0 {
		return left, nil
	}
	logger.Info("Join credential expired before the machine joined, deleting it", "answeredAt", rec.AnsweredAt)
	return 0, c.delete(ctx, credential, nil)
}

// delete deletes s (of the cache) unless getErr says there is none.
func (c *Controller) delete(ctx context.Context, s *corev1.Secret, getErr error) error {
	if getErr != nil {
		return nil
	}
	err := c.cfg.Client.CoreV1().Secrets(Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("failed to delete join credential %s/%s: %w", Namespace, s.Name, err)
	}
	return nil
}

func (c *Controller) deleteAccount(ctx context.Context, sa *corev1.ServiceAccount, getErr error) error {
	if getErr != nil {
		return nil
	}
	err := c.cfg.Client.CoreV1().ServiceAccounts(Namespace).Delete(ctx, sa.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &sa.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("failed to delete join identity %s/%s: %w", Namespace, sa.Name, err)
	}
	return nil
}
