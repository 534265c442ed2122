package image

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// TestManifestsRunTheImage: artifacts/deploy's kustomization holds every
// object of the folder and runs the image make image tags, as the user it
// runs as, with probes on the port the binary serves.
func TestManifestsRunTheImage(t *testing.T) {
	b := makeImage(t)
	objects := kustomize(t, filepath.Join(repo(), "artifacts", "deploy"))
	inFolder := map[string]bool{}
	files, err := filepath.Glob(filepath.Join(repo(), "artifacts", "deploy", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range decodeAll(t, data) {
			inFolder[key(o)] = true
		}
	}
	for _, o := range objects {
		delete(inFolder, key(o))
	}
	for k := range inFolder {
		t.Errorf("%s is in artifacts/deploy but not in its kustomization", k)
	}

	d := deployment(t, objects)
	c := d.Spec.Template.Spec.Containers[0]
	if len(b.tags) != 1 || c.Image != b.tags[0] {
		t.Errorf("the Deployment runs %q, make image tags %q", c.Image, b.tags)
	}
	cf, err := b.img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	uid, _, _ := strings.Cut(cf.Config.User, ":")
	sc := c.SecurityContext
	if sc == nil || sc.RunAsUser == nil || sc.RunAsNonRoot == nil {
		t.Errorf("the container's securityContext sets no runAsUser and runAsNonRoot")
	} else if !*sc.RunAsNonRoot || itoa(*sc.RunAsUser) != uid {
		t.Errorf("runAsNonRoot %t, runAsUser %d: want true and %s (the image's user)", *sc.RunAsNonRoot, *sc.RunAsUser, uid)
	}
	port := flagValue(c.Args, "secure-port")
	if port == "" {
		port = "8443" // the binary's default
	}
	if bind := flagValue(c.Args, "bind-address"); strings.HasPrefix(bind, "127.") || bind == "::1" {
		t.Errorf("--bind-address=%s: the kubelet probes the pod's IP", bind)
	}
	for name, p := range map[string]*corev1.Probe{"/readyz": c.ReadinessProbe, "/livez": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("no HTTP probe for %s", name)
			continue
		}
		g := p.HTTPGet
		if g.Path != name || g.Scheme != corev1.URISchemeHTTPS || containerPort(c, g.Port.String()) != port {
			t.Errorf("probe %s %s on port %s (container port %s), want %s over HTTPS on --secure-port %s",
				g.Scheme, g.Path, g.Port.String(), containerPort(c, g.Port.String()), name, port)
		}
	}

	// The overlay make image writes runs the same image.
	overlay := deployment(t, kustomize(t, filepath.Join(b.dirs[0], "deploy")))
	if got := overlay.Spec.Template.Spec.Containers[0].Image; got != b.tags[0] {
		t.Errorf("%s/deploy runs %q, want %q", b.dirs[0], got, b.tags[0])
	}
}

// kustomize renders dir with kubectl's built-in kustomize.
func kustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	out, err := run(time.Minute, repo(), nil, kubectlBinary(t), "kustomize", dir)
	if err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, []byte(out))
}

func decodeAll(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var objects []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objects
		}
		if err != nil {
			t.Fatal(err)
		}
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &o.Object); err != nil {
			t.Fatal(err)
		}
		if len(o.Object) > 0 {
			objects = append(objects, o)
		}
	}
}

func key(o *unstructured.Unstructured) string {
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

// deployment is the osm-apiserver Deployment among objects.
func deployment(t *testing.T, objects []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	for _, o := range objects {
		if o.GetKind() == "Deployment" && o.GetName() == "osm-apiserver" {
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d); err != nil {
				t.Fatal(err)
			}
			if len(d.Spec.Template.Spec.Containers) != 1 {
				t.Fatalf("Deployment osm-apiserver has %d containers, want 1", len(d.Spec.Template.Spec.Containers))
			}
			return d
		}
	}
	t.Fatal("no Deployment osm-apiserver")
	return nil
}

// flagValue is the value of --name=value or --name value in args.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// containerPort resolves a probe's port (a number or a port name) to a number.
func containerPort(c corev1.Container, port string) string {
	for _, p := range c.Ports {
		if p.Name == port {
			return itoa(int64(p.ContainerPort))
		}
	}
	return port
}

// TestCertManagerComponent: an overlay of artifacts/deploy with the
// cert-manager component serves cert-manager's certificate for the Service's
// name from the Secret it mounts (which makes the binary's mode external) and
// has cert-manager inject that certificate's CA into the APIService.
func TestCertManagerComponent(t *testing.T) {
	dir := t.TempDir()
	base, err := filepath.Rel(dir, filepath.Join(repo(), "artifacts", "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	overlay := "resources: [" + base + "]\ncomponents: [" + base + "/components/cert-manager]\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(overlay), 0o600); err != nil {
		t.Fatal(err)
	}
	objects := kustomize(t, dir)
	c := deployment(t, objects).Spec.Template.Spec
	certFile, keyFile := flagValue(c.Containers[0].Args, "tls-cert-file"), flagValue(c.Containers[0].Args, "tls-private-key-file")
	var secret string
	for _, m := range c.Containers[0].VolumeMounts {
		if strings.HasPrefix(certFile, m.MountPath+"/") && strings.HasPrefix(keyFile, m.MountPath+"/") {
			for _, v := range c.Volumes {
				if v.Name == m.Name && v.Secret != nil {
					secret = v.Secret.SecretName
				}
			}
		}
	}
	if secret == "" {
		t.Fatalf("--tls-cert-file=%q --tls-private-key-file=%q are in no Secret volume", certFile, keyFile)
	}
	var certificate *unstructured.Unstructured
	for _, o := range objects {
		if name, _, _ := unstructured.NestedString(o.Object, "spec", "secretName"); o.GetKind() == "Certificate" && name == secret {
			certificate = o
		}
	}
	if certificate == nil {
		t.Fatalf("no Certificate writes Secret %s", secret)
	}
	names, _, _ := unstructured.NestedStringSlice(certificate.Object, "spec", "dnsNames")
	if !slices.Contains(names, "osm-apiserver.kube-system.svc") {
		t.Errorf("Certificate %s is for %v, not osm-apiserver.kube-system.svc", certificate.GetName(), names)
	}
	for _, o := range objects {
		if o.GetKind() == "APIService" {
			want := certificate.GetNamespace() + "/" + certificate.GetName()
			if got := o.GetAnnotations()["cert-manager.io/inject-ca-from"]; got != want {
				t.Errorf("APIService %s: cert-manager.io/inject-ca-from %q, want %q", o.GetName(), got, want)
			}
		}
	}
}
