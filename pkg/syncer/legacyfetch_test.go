package syncer

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// Earlier versions kept the fetch tokens in cloud-init-settings, where
// whoever reads its Secrets (upstream's getter token) reads them: the syncer
// deletes them, and their ServiceAccounts, and nothing else there.
func TestLegacyFetchCredentialsLeaveCloudInitSettings(t *testing.T) {
	ref := machinecontroller.Ref{Namespace: "kube-system", Name: "workers"}
	legacyToken := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: settings, Name: tokens.FetchTokenSecretName(ref),
		Labels: ref.Labels(tokens.PurposeFetch)}, Type: tokens.SecretTypeFetchToken, Data: map[string][]byte{"token": []byte("a.b.c")}}
	legacyAccount := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: settings, Name: tokens.FetchAccessName(ref),
		Labels: ref.Labels(tokens.PurposeFetchAccess)}}
	users := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: settings, Name: "someone-else"}}
	usersSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: settings, Name: "someone-else-token",
		Labels: map[string]string{machinecontroller.PurposeLabel: tokens.PurposeFetch}}, Type: tokens.SecretTypeFetchToken}
	h := start(t, func(cfg *Config) {
		ctx := context.Background()
		for _, s := range []*corev1.Secret{legacyToken, usersSecret} {
			if _, err := cfg.Client.CoreV1().Secrets(settings).Create(ctx, s, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for _, a := range []*corev1.ServiceAccount{legacyAccount, users} {
			if _, err := cfg.Client.CoreV1().ServiceAccounts(settings).Create(ctx, a, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	})
	h.eventually("earlier versions' fetch credentials deleted", func() (bool, error) {
		_, err1 := h.client.CoreV1().Secrets(settings).Get(ctx, legacyToken.Name, metav1.GetOptions{})
		_, err2 := h.client.CoreV1().ServiceAccounts(settings).Get(ctx, legacyAccount.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err1) && apierrors.IsNotFound(err2), nil
	})
	if _, err := h.client.CoreV1().ServiceAccounts(settings).Get(ctx, users.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("a user's service account: %v", err)
	}
	if _, err := h.client.CoreV1().Secrets(settings).Get(ctx, usersSecret.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("a user's secret: %v", err)
	}
}
