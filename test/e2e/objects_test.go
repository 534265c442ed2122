package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// fromFile reads a one-object YAML file of testdata.
func fromFile(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	return readObject(t, filepath.Join("testdata", name))
}

// readObject reads a one-object YAML file.
func readObject(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return obj
}

// create creates obj (an OSP or an MD) in ns and deletes it when the test ends.
func create(ctx context.Context, t testing.TB, obj *unstructured.Unstructured, ns string) {
	t.Helper()
	gvr := mdResource
	if obj.GetKind() == "OperatingSystemProfile" {
		gvr = ospResource
	}
	obj.SetNamespace(ns)
	if _, err := env.dynamic.Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := env.dynamic.Resource(gvr).Namespace(ns).Delete(ctx, obj.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("clean-up: %v", err)
		}
	})
}

func patch(ctx context.Context, t testing.TB, gvr schema.GroupVersionResource, ns, name, merge string) {
	t.Helper()
	if _, err := env.dynamic.Resource(gvr).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(merge), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}
