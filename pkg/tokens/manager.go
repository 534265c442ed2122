package tokens

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Manager keeps the bootstrap tokens of MachineDeployments.
type Manager struct {
	// Client writes Secrets in kube-system (of the worker cluster).
	Client kubernetes.Interface
	// Lister reads Secrets in kube-system; a miss falls back to the API.
	Lister corev1listers.SecretLister
	// TTL is how long a token is valid after it is created or extended.
	TTL time.Duration
	// RenewBefore is how long before its expiration a token is extended.
	RenewBefore time.Duration
	// Now is the clock; time.Now if nil.
	Now func() time.Time
}

// Request says which token to ensure.
type Request struct {
	Ref     machinecontroller.Ref
	Purpose string
	// Groups is the auth-extra-groups value: comma-separated group names, each
	// starting with system:bootstrappers:.
	Groups string
}

// Ensure returns the token of req, creating it if needed and extending its
// expiration when less than RenewBefore is left. The token's value never
// changes while its Secret exists, so extending it does not change payloads.
func (m *Manager) Ensure(ctx context.Context, req Request) (Token, error) {
	for i := range candidates {
		id := candidateID(req.Ref, req.Purpose, i)
		s, err := m.get(id)
		if apierrors.IsNotFound(err) {
			tok, created, cerr := m.create(ctx, req, id)
			if cerr != nil || created {
				return tok, cerr
			}
			// The cache is behind, or a foreign token holds the name: read it
			// from the API.
			s, err = m.Client.CoreV1().Secrets(Namespace).Get(ctx, secretNamePrefix+id, metav1.GetOptions{})
		}
		if err != nil {
			return Token{}, fmt.Errorf("failed to get %s token %s of %s: %w", req.Purpose, id, req.Ref, err)
		}
		if !ownedBy(s, req.Ref, req.Purpose) {
			continue
		}
		return m.refresh(ctx, req, s)
	}
	return m.ensureRandom(ctx, req)
}

// ensureRandom returns req's token with a random ID, made when every derived
// ID is held by another token. A tenant can search for MD names whose derived
// IDs are another MD's (there are 36^6 IDs) to keep it from getting a token;
// a random ID cannot be aimed at. The token is found by its labels, read from
// the API rather than the cache: a cache that is behind must not make a
// second one.
func (m *Manager) ensureRandom(ctx context.Context, req Request) (Token, error) {
	list, err := m.Client.CoreV1().Secrets(Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector(req.Ref, req.Purpose).String()})
	if err != nil {
		return Token{}, fmt.Errorf("failed to list the %s tokens of %s: %w", req.Purpose, req.Ref, err)
	}
	if s := oldestOwned(list.Items, req.Ref, req.Purpose); s != nil {
		return m.refresh(ctx, req, s)
	}
	for range candidates {
		id, err := randomString(6)
		if err != nil {
			return Token{}, err
		}
		tok, created, err := m.create(ctx, req, id)
		if err != nil || created {
			return tok, err
		}
	}
	return Token{}, fmt.Errorf("failed to find a free %s token id for %s: %d derived and %d random ids taken", req.Purpose, req.Ref, candidates, candidates)
}

// selector selects the tokens of ref for purpose.
func selector(ref machinecontroller.Ref, purpose string) labels.Selector {
	return labels.SelectorFromSet(ref.Labels(purpose))
}

// oldestOwned returns the first made of the tokens of ref for purpose among
// secrets, nil if there is none: every replica picks the same one.
func oldestOwned(secrets []corev1.Secret, ref machinecontroller.Ref, purpose string) *corev1.Secret {
	var found *corev1.Secret
	for i := range secrets {
		s := &secrets[i]
		if !ownedBy(s, ref, purpose) {
			continue
		}
		if found == nil || s.CreationTimestamp.Before(&found.CreationTimestamp) ||
			s.CreationTimestamp.Equal(&found.CreationTimestamp) && s.Name < found.Name {
			found = s
		}
	}
	return found
}

// Lookup returns the token of ref for purpose from the cache only; ok is false
// if the syncer has not created it yet.
func Lookup(lister corev1listers.SecretLister, ref machinecontroller.Ref, purpose string) (tok Token, ok bool) {
	for i := range candidates {
		s, err := lister.Secrets(Namespace).Get(secretNamePrefix + candidateID(ref, purpose, i))
		if err != nil || !ownedBy(s, ref, purpose) {
			continue
		}
		return parse(s)
	}
	// A random ID, when every derived one was taken (see ensureRandom).
	list, err := lister.Secrets(Namespace).List(selector(ref, purpose))
	if err != nil || len(list) == 0 {
		return Token{}, false
	}
	secrets := make([]corev1.Secret, len(list))
	for i, s := range list {
		secrets[i] = *s
	}
	if s := oldestOwned(secrets, ref, purpose); s != nil {
		return parse(s)
	}
	return Token{}, false
}

// Delete removes every token of ref.
func (m *Manager) Delete(ctx context.Context, ref machinecontroller.Ref) error {
	list, err := m.Lister.Secrets(Namespace).List(ref.Selector())
	if err != nil {
		return fmt.Errorf("failed to list tokens of %s: %w", ref, err)
	}
	var errs []error
	for _, s := range list {
		if owner, ok := machinecontroller.Owner(s); !ok || owner != ref {
			continue
		}
		errs = append(errs, m.deleteSecret(ctx, ref, s.Name))
	}
	return errors.Join(errs...)
}

// DeletePurpose removes ref's tokens of purpose that the cache knows of: no
// API call when there are none. The syncer removes the bootstrap tokens
// earlier versions used as fetch tokens (PurposeFetch) with it.
func (m *Manager) DeletePurpose(ctx context.Context, ref machinecontroller.Ref, purpose string) error {
	list, err := m.Lister.Secrets(Namespace).List(selector(ref, purpose))
	if err != nil {
		return fmt.Errorf("failed to list the %s tokens of %s: %w", purpose, ref, err)
	}
	var errs []error
	for _, s := range list {
		if ownedBy(s, ref, purpose) {
			errs = append(errs, m.deleteSecret(ctx, ref, s.Name))
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) deleteSecret(ctx context.Context, ref machinecontroller.Ref, name string) error {
	err := m.Client.CoreV1().Secrets(Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to delete token %s/%s of %s: %w", Namespace, name, ref, err)
	}
	return nil
}

func (m *Manager) get(id string) (*corev1.Secret, error) {
	return m.Lister.Secrets(Namespace).Get(secretNamePrefix + id)
}

func (m *Manager) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// create makes a new token with the given id. created is false, with no error,
// when a Secret of that name exists already.
func (m *Manager) create(ctx context.Context, req Request, id string) (tok Token, created bool, err error) {
	secret, err := randomSecret()
	if err != nil {
		return Token{}, false, err
	}
	tok = Token{ID: id, Secret: secret, Expiration: m.now().Add(m.TTL).Truncate(time.Second)}
	_, err = m.Client.CoreV1().Secrets(Namespace).Create(ctx, newSecret(req.Ref, req.Purpose, req.Groups, tok), metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		return Token{}, false, nil
	case err != nil:
		return Token{}, false, fmt.Errorf("failed to create %s token of %s: %w", req.Purpose, req.Ref, err)
	}
	return tok, true, nil
}

// refresh extends s when it is about to expire and repairs fields that differ
// from what req asks for, keeping the token's value when it is valid.
func (m *Manager) refresh(ctx context.Context, req Request, s *corev1.Secret) (Token, error) {
	tok, valid := parse(s)
	if !valid {
		secret, err := randomSecret()
		if err != nil {
			return Token{}, err
		}
		tok = Token{ID: strings.TrimPrefix(s.Name, secretNamePrefix), Secret: secret}
	}
	if tok.Expiration.Sub(m.now()) < m.RenewBefore {
		tok.Expiration = m.now().Add(m.TTL).Truncate(time.Second)
	}
	want := newSecret(req.Ref, req.Purpose, req.Groups, tok)
	if s.Type == want.Type && sameData(s.Data, want.Data) {
		return tok, nil
	}
	if s.Type != want.Type {
		// The type of a Secret is immutable: replace it.
		if err := m.Client.CoreV1().Secrets(Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return Token{}, fmt.Errorf("failed to replace %s token %s of %s: %w", req.Purpose, s.Name, req.Ref, err)
		}
		_, err := m.Client.CoreV1().Secrets(Namespace).Create(ctx, want, metav1.CreateOptions{})
		if err != nil {
			return Token{}, fmt.Errorf("failed to replace %s token %s of %s: %w", req.Purpose, s.Name, req.Ref, err)
		}
		return tok, nil
	}
	updated := s.DeepCopy()
	updated.Data = want.Data
	if _, err := m.Client.CoreV1().Secrets(Namespace).Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return Token{}, fmt.Errorf("failed to update %s token %s of %s: %w", req.Purpose, s.Name, req.Ref, err)
	}
	return tok, nil
}

func sameData(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}
