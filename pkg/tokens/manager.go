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
	"k8s.io/client-go/tools/cache"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Manager keeps the bootstrap tokens of MachineDeployments.
type Manager struct {
	// Client writes Secrets in kube-system (of the worker cluster).
	Client kubernetes.Interface
	// Cache holds the token Secrets in kube-system, indexed as Informer.Index
	// is; a miss falls back to the API.
	Cache cache.Indexer
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
	owned := make([]*corev1.Secret, 0, 1)
	for i := range list.Items {
		if ownedBy(&list.Items[i], req.Ref, req.Purpose) {
			owned = append(owned, &list.Items[i])
		}
	}
	if s := preferred(owned, req.Ref, req.Purpose); s != nil {
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

// preferred returns the token Ensure uses among owned, ref's tokens for
// purpose: the first derived ID, else the first made (every replica picks the
// same); nil if there is none.
func preferred(owned []*corev1.Secret, ref machinecontroller.Ref, purpose string) *corev1.Secret {
	switch len(owned) {
	case 0:
		return nil
	case 1:
		return owned[0]
	}
	for i := range candidates {
		name := secretNamePrefix + candidateID(ref, purpose, i)
		for _, s := range owned {
			if s.Name == name {
				return s
			}
		}
	}
	found := owned[0]
	for _, s := range owned[1:] {
		if s.CreationTimestamp.Before(&found.CreationTimestamp) ||
			s.CreationTimestamp.Equal(&found.CreationTimestamp) && s.Name < found.Name {
			found = s
		}
	}
	return found
}

// Lookup returns the token of ref for purpose from the cache only (indexed
// as Informer.Index is); ok is false if the syncer has not created it yet.
func Lookup(tokens cache.Indexer, ref machinecontroller.Ref, purpose string) (tok Token, ok bool) {
	s := preferred(ownedIn(tokens, ref, purpose), ref, purpose)
	if s == nil {
		return Token{}, false
	}
	return parse(s)
}

// ownedIn returns ref's tokens for purpose in tokens.
func ownedIn(tokens cache.Indexer, ref machinecontroller.Ref, purpose string) []*corev1.Secret {
	objs, err := tokens.ByIndex(ownerIndex, ownerKey(ref, purpose))
	if err != nil || len(objs) == 0 {
		return nil
	}
	owned := make([]*corev1.Secret, 0, len(objs))
	for _, obj := range objs {
		// The index key is a hash: check what it stands for.
		if s, ok := obj.(*corev1.Secret); ok && s.Namespace == Namespace && ownedBy(s, ref, purpose) {
			owned = append(owned, s)
		}
	}
	return owned
}

// Delete removes every token of ref.
func (m *Manager) Delete(ctx context.Context, ref machinecontroller.Ref) error {
	var names []string
	err := cache.ListAllByNamespace(m.Cache, Namespace, ref.Selector(), func(obj any) {
		if s, ok := obj.(*corev1.Secret); ok {
			if owner, ok := machinecontroller.Owner(s); ok && owner == ref {
				names = append(names, s.Name)
			}
		}
	})
	if err != nil {
		return fmt.Errorf("failed to list tokens of %s: %w", ref, err)
	}
	var errs []error
	for _, name := range names {
		errs = append(errs, m.deleteSecret(ctx, ref, name))
	}
	return errors.Join(errs...)
}

// DeletePurpose removes ref's tokens of purpose that the cache knows of: no
// API call when there are none. The syncer removes the bootstrap tokens
// earlier versions used as fetch tokens (PurposeFetch) with it.
func (m *Manager) DeletePurpose(ctx context.Context, ref machinecontroller.Ref, purpose string) error {
	var errs []error
	for _, s := range ownedIn(m.Cache, ref, purpose) {
		errs = append(errs, m.deleteSecret(ctx, ref, s.Name))
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
	obj, exists, err := m.Cache.GetByKey(Namespace + "/" + secretNamePrefix + id)
	if err != nil {
		return nil, err
	}
	s, ok := obj.(*corev1.Secret)
	if !exists || !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("secrets"), secretNamePrefix+id)
	}
	return s, nil
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
