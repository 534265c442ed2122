package nodejoin

import (
	"context"
	"fmt"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Defaults of Issuer.
const (
	// DefaultCredentialTTL fits a slow cloud boot: the kubelet asks for its
	// certificate after the provisioning (packages, containerd, downloads),
	// minutes after the exchange.
	DefaultCredentialTTL = time.Hour
	// DefaultRetryWindow is how long after the first answer the same boot
	// is answered again (its answer was lost on the way).
	DefaultRetryWindow = 10 * time.Minute
	// minTokenTTL is the shortest lifetime kube-apiserver issues a token for.
	minTokenTTL = 10 * time.Minute
)

// Issuer claims a machine for the boot that asks first and issues its join
// credential. Every replica issues: the claim is the creation of the join
// identity, which the API server lets one request win, so replicas and
// restarts agree without talking to each other.
type Issuer struct {
	// Client creates ServiceAccounts, their tokens and Secrets in Namespace.
	Client kubernetes.Interface
	// TTL is how long a credential is valid after the machine's first answer
	// (at least 10 minutes).
	TTL time.Duration
	// RetryWindow is how long after the first answer the same boot is
	// answered again; shorter than TTL.
	RetryWindow time.Duration
	// Now is the clock; time.Now if nil.
	Now func() time.Time
}

// Credential is a token of a machine's join identity.
type Credential struct {
	Token      string
	Expiration time.Time
}

// RefusedError says why a machine is not answered (again).
type RefusedError struct {
	Reason string
}

func (e *RefusedError) Error() string { return e.Reason }

// Issue returns a join credential of m for boot: the first request of m
// claims it for its boot, a request of the same boot (Record.Answered) within
// the retry window gets a credential again (expiring when the first does),
// any other is a *RefusedError.
func (i *Issuer) Issue(ctx context.Context, m *clusterv1alpha1.Machine, boot Boot) (Credential, error) {
	now := i.now()
	accounts := i.Client.CoreV1().ServiceAccounts(Namespace)
	want := newAccount(m, boot, now)
	for range 2 {
		_, err := accounts.Create(ctx, want, metav1.CreateOptions{})
		if err == nil {
			return i.issue(ctx, m, want, now, true)
		}
		if !apierrors.IsAlreadyExists(err) {
			return Credential{}, fmt.Errorf("failed to create join identity %s/%s of machine %s/%s: %w", Namespace, want.Name, m.Namespace, m.Name, err)
		}
		got, err := accounts.Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue // deleted in between: claim it anew
		}
		if err != nil {
			return Credential{}, fmt.Errorf("failed to read join identity %s/%s of machine %s/%s: %w", Namespace, want.Name, m.Namespace, m.Name, err)
		}
		rec, ok := ParseRecord(got)
		switch {
		case !ok:
			return Credential{}, fmt.Errorf("service account %s/%s exists and is not the join identity of machine %s/%s", Namespace, want.Name, m.Namespace, m.Name)
		case rec.MachineUID != m.UID:
			// A Machine of the same name, deleted since: its record goes.
			err := accounts.Delete(ctx, got.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &got.UID}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return Credential{}, fmt.Errorf("failed to delete the join identity of an earlier machine %s/%s: %w", m.Namespace, m.Name, err)
			}
			continue
		case got.DeletionTimestamp != nil:
			return Credential{}, &RefusedError{Reason: fmt.Sprintf("the join identity of machine %s/%s is being deleted", m.Namespace, m.Name)}
		case !rec.Answered(boot):
			return Credential{}, &RefusedError{Reason: fmt.Sprintf("machine %s/%s was answered at %s, for another boot; it is answered once",
				m.Namespace, m.Name, rec.AnsweredAt.Format(time.RFC3339))}
		case now.After(rec.AnsweredAt.Add(i.RetryWindow)):
			return Credential{}, &RefusedError{Reason: fmt.Sprintf("machine %s/%s was answered at %s; the same boot may ask again within %s, not later",
				m.Namespace, m.Name, rec.AnsweredAt.Format(time.RFC3339), i.RetryWindow)}
		}
		return i.issue(ctx, m, got, rec.AnsweredAt, false)
	}
	return Credential{}, fmt.Errorf("failed to claim machine %s/%s: its join identity keeps changing", m.Namespace, m.Name)
}

// issue requests a token of account bound to m's credential Secret, which it
// creates first unless it exists: a retry of the same boot finds the one of
// the first answer, or none if the first request failed before it.
func (i *Issuer) issue(ctx context.Context, m *clusterv1alpha1.Machine, account *corev1.ServiceAccount, answeredAt time.Time, claimed bool) (Credential, error) {
	secrets := i.Client.CoreV1().Secrets(Namespace)
	want := newCredential(m)
	var secret *corev1.Secret
	var err error
	if !claimed {
		secret, err = secrets.Get(ctx, want.Name, metav1.GetOptions{})
	}
	if claimed || apierrors.IsNotFound(err) {
		secret, err = secrets.Create(ctx, want, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			secret, err = secrets.Get(ctx, want.Name, metav1.GetOptions{})
		}
	}
	if err != nil {
		return Credential{}, fmt.Errorf("failed to create join credential %s/%s of machine %s/%s: %w", Namespace, want.Name, m.Namespace, m.Name, err)
	}
	if _, ok := machineOf(secret); !ok || secret.Type != SecretTypeCredential {
		return Credential{}, fmt.Errorf("secret %s/%s exists and is not the join credential of machine %s/%s", Namespace, want.Name, m.Namespace, m.Name)
	}
	// Every token of the machine expires when its first does.
	ttl := max(answeredAt.Add(i.ttl()).Sub(i.now()), minTokenTTL)
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(int64(ttl / time.Second)),
		BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Secret", Name: secret.Name, UID: secret.UID},
	}}
	resp, err := i.Client.CoreV1().ServiceAccounts(Namespace).CreateToken(ctx, account.Name, req, metav1.CreateOptions{})
	if err != nil {
		return Credential{}, fmt.Errorf("failed to request a join token for machine %s/%s: %w", m.Namespace, m.Name, err)
	}
	return Credential{Token: resp.Status.Token, Expiration: resp.Status.ExpirationTimestamp.Time}, nil
}

func (i *Issuer) ttl() time.Duration {
	return max(i.TTL, minTokenTTL)
}

func (i *Issuer) now() time.Time {
	if i.Now != nil {
		return i.Now()
	}
	return time.Now()
}
