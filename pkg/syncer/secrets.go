package syncer

import (
	"bytes"
	"context"
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/informers"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
)

// payloadSecret returns the Secret machine-controller reads for one payload.
func payloadSecret(ref machinecontroller.Ref, md *clusterv1alpha1.MachineDeployment, out *resolve.Rendered, kind osm.PayloadType) (*corev1.Secret, error) {
	data, err := out.Payload(kind).UserData()
	if err != nil {
		return nil, fmt.Errorf("machinedeployment %s/%s: %w", md.Namespace, md.Name, err)
	}
	annotations := ref.Annotations()
	annotations[machinecontroller.AnnotationSecretMDRevision] = md.Annotations[machinecontroller.AnnotationMDRevision]
	annotations[machinecontroller.AnnotationSecretOSPVersion] = out.Profile.Version
	annotations[machinecontroller.AnnotationSecretMDAnnotationsHash] = machinecontroller.AnnotationsHash(md.Annotations)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        machinecontroller.SecretName(ref.Name, ref.Namespace, kind),
			Namespace:   machinecontroller.CloudInitSettingsNamespace,
			Labels:      ref.Labels(string(kind) + "-config"),
			Annotations: annotations,
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{machinecontroller.SecretDataKey: data},
	}, nil
}

// syncEdgeScript writes the join script of an MD on cloud provider edge into
// the Secret upstream OSM uses, and removes ours when the MD is no longer on edge.
func (c *Controller) syncEdgeScript(ctx context.Context, md *clusterv1alpha1.MachineDeployment, out *resolve.Rendered) error {
	ref := machinecontroller.RefOf(md)
	name := machinecontroller.EdgeScriptSecretName(ref.Name, ref.Namespace)
	if out.EdgeScript.Format == "" {
		got, err := c.payloads.Secrets(machinecontroller.CloudInitSettingsNamespace).Get(name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if owner, ok := machinecontroller.Owner(got); err != nil || !ok || owner != ref {
			return err
		}
		err = c.cfg.Client.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return wrapWrite(err, "delete", got)
	}
	data, err := out.EdgeScript.UserData()
	if err != nil {
		return fmt.Errorf("edge script of %s: %w", ref, err)
	}
	annotations := ref.Annotations()
	annotations[machinecontroller.AnnotationSecretOSPVersion] = out.Profile.Version
	return c.applySecret(ctx, md, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   machinecontroller.CloudInitSettingsNamespace,
			Labels:      ref.Labels("edge-script"),
			Annotations: annotations,
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{machinecontroller.EdgeScriptDataKey: data},
	})
}

// applySecret creates want, md's Secret, or updates the existing Secret when
// its data, type, or our labels and annotations differ. An unchanged Secret is
// not written, so nothing churns and machine-controller sees no spurious
// updates. A Secret another MD has a claim to is never overwritten.
func (c *Controller) applySecret(ctx context.Context, md *clusterv1alpha1.MachineDeployment, want *corev1.Secret) error {
	secrets := c.cfg.Client.CoreV1().Secrets(want.Namespace)
	got, err := c.payloads.Secrets(want.Namespace).Get(want.Name)
	if apierrors.IsNotFound(err) {
		_, err = secrets.Create(ctx, want, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			return wrapWrite(err, "create", want)
		}
		// Our cache is behind, or the Secret is not labelled as ours yet.
		got, err = secrets.Get(ctx, want.Name, metav1.GetOptions{})
	}
	if err != nil {
		return wrapWrite(err, "get", want)
	}
	if err := c.mayOverwrite(md, got); err != nil {
		return err
	}
	if got.Type != want.Type {
		// The type is immutable: replace the Secret.
		if err := secrets.Delete(ctx, want.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return wrapWrite(err, "replace", want)
		}
		_, err := secrets.Create(ctx, want, metav1.CreateOptions{})
		return wrapWrite(err, "replace", want)
	}
	if sameSecret(got, want) {
		return nil
	}
	updated := got.DeepCopy()
	updated.Data = want.Data
	updated.Labels = merge(updated.Labels, want.Labels)
	updated.Annotations = merge(updated.Annotations, want.Annotations)
	_, err = secrets.Update(ctx, updated, metav1.UpdateOptions{})
	return wrapWrite(err, "update", want)
}

func wrapWrite(err error, verb string, s *corev1.Secret) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("failed to %s secret %s/%s: %w", verb, s.Namespace, s.Name, err)
}

// sameSecret compares a Secret from the API or the cache (where user-data is
// only a digest, see informers.PayloadDigest) with the one we want.
func sameSecret(got, want *corev1.Secret) bool {
	if len(got.Data) != len(want.Data) || !subset(want.Labels, got.Labels) || !subset(want.Annotations, got.Annotations) {
		return false
	}
	for k, v := range want.Data {
		if g, ok := got.Data[k]; ok {
			if !bytes.Equal(g, v) {
				return false
			}
			continue
		}
		if d, ok := informers.PayloadDigest(got, k); !ok || d != informers.DigestOf(v) {
			return false
		}
	}
	return true
}

// subset says whether every entry of want is in got.
func subset(want, got map[string]string) bool {
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			return false
		}
	}
	return true
}

func merge(dst, src map[string]string) map[string]string {
	if dst == nil {
		dst = make(map[string]string, len(src))
	}
	for k, v := range src {
		dst[k] = v
	}
	return dst
}

// eventScheme only needs core types: Events on MachineDeployments are recorded
// against a hand-built ObjectReference.
var eventScheme = runtime.NewScheme()

func init() {
	_ = scheme.AddToScheme(eventScheme)
}
