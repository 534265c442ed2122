// Package tokenstest answers TokenRequests on fake clientsets, for tests of
// code that issues fetch tokens.
package tokenstest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var serial atomic.Int64

// IssueTokens makes client answer TokenRequests as kube-apiserver does: for
// an existing ServiceAccount, bound to an existing Secret, valid for the
// requested seconds from now(). The tokens are JWTs with the claims
// kube-apiserver writes and no valid signature; every one is different.
func IssueTokens(client *fake.Clientset, now func() time.Time) {
	client.PrependReactor("create", "serviceaccounts", func(action k8stesting.Action) (bool, runtime.Object, error) {
		create, ok := action.(k8stesting.CreateActionImpl)
		if !ok || action.GetSubresource() != "token" {
			return false, nil, nil
		}
		req, ok := create.GetObject().(*authenticationv1.TokenRequest)
		if !ok {
			return true, nil, fmt.Errorf("not a TokenRequest: %T", create.GetObject())
		}
		ns := action.GetNamespace()
		obj, err := client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("serviceaccounts"), ns, create.Name)
		if err != nil {
			return true, nil, err
		}
		sa := obj.(*corev1.ServiceAccount)
		claims := map[string]any{"namespace": ns, "serviceaccount": map[string]string{"name": sa.Name, "uid": string(sa.UID)}}
		if ref := req.Spec.BoundObjectRef; ref != nil {
			obj, err := client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("secrets"), ns, ref.Name)
			if err != nil {
				return true, nil, err
			}
			if s := obj.(*corev1.Secret); ref.Kind != "Secret" || (ref.UID != "" && ref.UID != s.UID) {
				return true, nil, apierrors.NewBadRequest(fmt.Sprintf("bound object %s %s does not match", ref.Kind, ref.Name))
			}
			claims["secret"] = map[string]string{"name": ref.Name, "uid": string(ref.UID)}
		}
		iat := now().Truncate(time.Second)
		exp := iat.Add(time.Hour)
		if s := req.Spec.ExpirationSeconds; s != nil {
			exp = iat.Add(time.Duration(*s) * time.Second)
		}
		token, err := JWT(map[string]any{
			"iat": iat.Unix(), "exp": exp.Unix(), "nbf": iat.Unix(), "jti": fmt.Sprint(serial.Add(1)),
			"sub": "system:serviceaccount:" + ns + ":" + sa.Name, "kubernetes.io": claims,
		})
		if err != nil {
			return true, nil, err
		}
		return true, &authenticationv1.TokenRequest{
			Spec:   req.Spec,
			Status: authenticationv1.TokenRequestStatus{Token: token, ExpirationTimestamp: metav1.NewTime(exp)},
		}, nil
	})
}

// JWT returns an unsigned JWT with claims.
func JWT(claims map[string]any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"RS256","kid":"test"}`)) + "." + enc.EncodeToString(payload) + ".c2lnbmF0dXJl", nil
}
