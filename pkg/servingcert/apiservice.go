package servingcert

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
)

// APIServiceName is the APIService of osm.k8c.io.
const APIServiceName = "v1alpha1.osm.k8c.io"

var apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// APIService keeps the caBundle of one APIService: get and patch of that one
// object, which RBAC can grant by name.
type APIService struct {
	client dynamic.ResourceInterface
	name   string
}

// NewAPIService returns the APIService name of the cluster client reads.
func NewAPIService(client dynamic.Interface, name string) *APIService {
	return &APIService{client: client.Resource(apiServices), name: name}
}

// Sync sets the caBundle to bundle if it is not that already. A missing
// APIService is no error: it is synced once it is there.
func (a *APIService) Sync(ctx context.Context, bundle []byte) error {
	obj, err := a.client.Get(ctx, a.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		klog.V(2).InfoS("No APIService to set the caBundle of yet", "apiservice", a.name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to read apiservice %s: %w", a.name, err)
	}
	if current, _, _ := unstructured.NestedString(obj.Object, "spec", "caBundle"); current != "" {
		if decoded, err := base64.StdEncoding.DecodeString(current); err == nil && bytes.Equal(decoded, bundle) {
			return nil
		}
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"caBundle": bundle}})
	if err != nil {
		return err
	}
	if _, err := a.client.Patch(ctx, a.name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "osm-apiserver"}); err != nil {
		return fmt.Errorf("failed to set the caBundle of apiservice %s: %w", a.name, err)
	}
	klog.InfoS("APIService caBundle set to the serving certificate's CA bundle", "apiservice", a.name)
	return nil
}
