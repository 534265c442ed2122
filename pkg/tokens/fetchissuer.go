package tokens

import (
	"context"
	"errors"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/ptr"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// FetchIssuer keeps the fetch credential of MachineDeployments: a
// ServiceAccount, and a token of it from the TokenRequest API, bound to the
// Secret that stores it. It reads both from caches, so steady-state syncs cost
// no API calls.
type FetchIssuer struct {
	// Client writes ServiceAccounts and Secrets and requests tokens in FetchNamespace.
	Client kubernetes.Interface
	// Secrets reads the Secrets holding fetch tokens (Informer.FetchLister).
	Secrets corev1listers.SecretLister
	// ServiceAccounts reads the ServiceAccounts in FetchNamespace.
	ServiceAccounts corev1listers.ServiceAccountLister
	// TTL is the lifetime a token is requested for (at least 10 minutes).
	TTL time.Duration
	// RenewBefore is how long before its expiration a token is replaced, for
	// a token of lifetime TTL.
	RenewBefore time.Duration
	// Now is the clock; time.Now if nil.
	Now func() time.Time
}

// Ensure returns ref's fetch token, creating its ServiceAccount and Secret if
// needed, and requesting a new token when there is none, it is due for renewal,
// it lives longer than TTL, or it belongs to a ServiceAccount or Secret that
// was deleted since. A replaced token stays valid until it expires: VMs that
// booted with it can still fetch.
func (f *FetchIssuer) Ensure(ctx context.Context, ref machinecontroller.Ref) (FetchToken, error) {
	// Independent, so made side by side.
	var sa *corev1.ServiceAccount
	var saErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		sa, saErr = f.ensureServiceAccount(ctx, ref)
	}()
	secret, err := f.ensureSecret(ctx, ref)
	<-done
	if err := errors.Join(saErr, err); err != nil {
		return FetchToken{}, err
	}
	if tok, err := ParseFetchToken(string(secret.Data[keyFetchToken])); err == nil && f.current(tok, sa, secret) {
		return tok, nil
	}
	return f.issue(ctx, ref, sa, secret)
}

// RenewAt is when tok is to be replaced.
func (f *FetchIssuer) RenewAt(tok FetchToken) time.Time {
	return tok.RenewAt(f.ttl(), f.RenewBefore)
}

// Delete removes ref's token Secret and ServiceAccount, which revokes every
// fetch token of ref.
func (f *FetchIssuer) Delete(ctx context.Context, ref machinecontroller.Ref) error {
	var errs []error
	err := f.Client.CoreV1().Secrets(FetchNamespace).Delete(ctx, FetchTokenSecretName(ref), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("failed to delete fetch token secret %s/%s of %s: %w", FetchNamespace, FetchTokenSecretName(ref), ref, err))
	}
	err = f.Client.CoreV1().ServiceAccounts(FetchNamespace).Delete(ctx, FetchAccessName(ref), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("failed to delete fetch service account %s/%s of %s: %w", FetchNamespace, FetchAccessName(ref), ref, err))
	}
	return errors.Join(errs...)
}

func (f *FetchIssuer) ttl() time.Duration {
	return max(f.TTL, minTokenTTL)
}

func (f *FetchIssuer) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// current says whether tok is the token to keep handing out.
func (f *FetchIssuer) current(tok FetchToken, sa *corev1.ServiceAccount, secret *corev1.Secret) bool {
	now := f.now()
	// A minute of slack: kube-apiserver counts the lifetime from its own clock.
	return tok.boundTo(sa, secret) && now.Before(f.RenewAt(tok)) && !tok.Expiration.After(now.Add(f.ttl()+time.Minute))
}

// issue requests a new token bound to secret and stores it there.
func (f *FetchIssuer) issue(ctx context.Context, ref machinecontroller.Ref, sa *corev1.ServiceAccount, secret *corev1.Secret) (FetchToken, error) {
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(int64(f.ttl() / time.Second)),
		BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Secret", Name: secret.Name, UID: secret.UID},
	}}
	resp, err := f.Client.CoreV1().ServiceAccounts(FetchNamespace).CreateToken(ctx, sa.Name, req, metav1.CreateOptions{})
	if err != nil {
		return FetchToken{}, fmt.Errorf("failed to request a fetch token for %s from service account %s/%s: %w", ref, FetchNamespace, sa.Name, err)
	}
	tok, err := ParseFetchToken(resp.Status.Token)
	if err != nil {
		return FetchToken{}, fmt.Errorf("fetch token of %s from service account %s/%s: %w", ref, FetchNamespace, sa.Name, err)
	}
	updated := secret.DeepCopy()
	updated.Data = map[string][]byte{keyFetchToken: []byte(tok.Value)}
	// The resourceVersion guards against a second syncer storing another token
	// at the same moment: the loser retries and finds the winner's.
	if _, err := f.Client.CoreV1().Secrets(FetchNamespace).Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return FetchToken{}, fmt.Errorf("failed to store the fetch token of %s in secret %s/%s: %w", ref, FetchNamespace, secret.Name, err)
	}
	return tok, nil
}

func (f *FetchIssuer) ensureServiceAccount(ctx context.Context, ref machinecontroller.Ref) (*corev1.ServiceAccount, error) {
	want := FetchServiceAccount(ref, FetchNamespace)
	accounts := f.Client.CoreV1().ServiceAccounts(FetchNamespace)
	got, err := f.ServiceAccounts.ServiceAccounts(FetchNamespace).Get(want.Name)
	if apierrors.IsNotFound(err) {
		got, err = accounts.Create(ctx, want, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			got, err = accounts.Get(ctx, want.Name, metav1.GetOptions{})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("failed to ensure fetch service account %s/%s of %s: %w", FetchNamespace, want.Name, ref, err)
	}
	if sameMeta(got.ObjectMeta, want.ObjectMeta) && equality.Semantic.DeepEqual(got.AutomountServiceAccountToken, want.AutomountServiceAccountToken) {
		return got, nil
	}
	updated := got.DeepCopy()
	updated.Labels, updated.Annotations = want.Labels, want.Annotations
	updated.AutomountServiceAccountToken = want.AutomountServiceAccountToken
	got, err = accounts.Update(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to repair fetch service account %s/%s of %s: %w", FetchNamespace, want.Name, ref, err)
	}
	return got, nil
}

// ensureSecret returns the Secret holding ref's token, creating it empty if
// it is missing and replacing it if it is of another type. A Secret of that
// name that is not ref's is an error: the token would be bound to it.
func (f *FetchIssuer) ensureSecret(ctx context.Context, ref machinecontroller.Ref) (*corev1.Secret, error) {
	want := fetchTokenSecret(ref)
	secrets := f.Client.CoreV1().Secrets(FetchNamespace)
	got, err := f.Secrets.Secrets(FetchNamespace).Get(want.Name)
	if apierrors.IsNotFound(err) {
		got, err = secrets.Create(ctx, want, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			// The cache is behind, or sees only Secrets labelled as ours.
			got, err = secrets.Get(ctx, want.Name, metav1.GetOptions{})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("failed to ensure fetch token secret %s/%s of %s: %w", FetchNamespace, want.Name, ref, err)
	}
	if !ownedBy(got, ref, PurposeFetch) {
		return nil, fmt.Errorf("secret %s/%s exists and does not hold the fetch token of %s", FetchNamespace, want.Name, ref)
	}
	if got.Type == want.Type {
		return got, nil
	}
	// The type of a Secret is immutable: replace it (and so any token bound to it).
	if err := secrets.Delete(ctx, want.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("failed to replace fetch token secret %s/%s of %s: %w", FetchNamespace, want.Name, ref, err)
	}
	got, err = secrets.Create(ctx, want, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to replace fetch token secret %s/%s of %s: %w", FetchNamespace, want.Name, ref, err)
	}
	return got, nil
}
