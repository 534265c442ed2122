package image

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// sandbox is the pod's file system in a directory the image's user can read.
type sandbox struct{ dir string }

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	dir, err := os.MkdirTemp("", "osm-image-pod-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &sandbox{dir: dir}
}

// file writes data to rel in the sandbox with mode, and returns its path.
func (s *sandbox) file(t *testing.T, rel string, data []byte, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(s.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // not masked by the umask
		t.Fatal(err)
	}
	return path
}

// volumes fills the container's volume mounts as the kubelet would and returns
// mount path -> directory: Secret osm-apiserver-tls (a kubernetes.io/tls Secret)
// holds the cluster's serving certificate for osm-apiserver.kube-system.svc,
// an emptyDir is empty and writable.
func (s *sandbox) volumes(t *testing.T, d *appsv1.Deployment, c corev1.Container, cl *cluster) map[string]string {
	t.Helper()
	volumes := map[string]corev1.Volume{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		rel := "volumes/" + m.Name
		dir := filepath.Join(s.dir, filepath.FromSlash(rel))
		switch {
		case !ok:
			t.Fatalf("volume mount %s names no volume", m.Name)
		case v.Secret != nil && v.Secret.SecretName == "osm-apiserver-tls":
			mode := os.FileMode(0o644) // the Secret volume's default
			if v.Secret.DefaultMode != nil {
				mode = os.FileMode(*v.Secret.DefaultMode)
			}
			s.file(t, rel+"/tls.crt", cl.pki(t, "osm-apiserver.crt"), mode)
			s.file(t, rel+"/tls.key", cl.pki(t, "osm-apiserver.key"), mode)
		case v.EmptyDir != nil:
			if err := os.MkdirAll(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("volume %s: this test knows Secret osm-apiserver-tls and emptyDirs only", m.Name)
		}
		mounts[m.MountPath] = dir
	}
	return mounts
}

// cluster is a local cluster of hack/local-cluster.sh: etcd, kube-apiserver, CRDs.
type cluster struct {
	dir string
	env map[string]string
}

// startCluster starts a local cluster; extraEnv goes to hack/local-cluster.sh
// (OSM_OSP_CRD=none: without osm-apiserver's CRDs).
func startCluster(t *testing.T, extraEnv ...string) *cluster {
	t.Helper()
	cl := &cluster{dir: t.TempDir()}
	env := append([]string{"OSM_CLUSTER_DIR=" + cl.dir, fmt.Sprintf("OSM_CLUSTER_WATCH_PID=%d", os.Getpid())}, extraEnv...)
	t.Cleanup(func() {
		if _, err := run(time.Minute, repo(), env, "hack/local-cluster.sh", "down"); err != nil {
			t.Error(err)
		}
	})
	if _, err := run(30*time.Minute, repo(), env, "hack/local-cluster.sh", "cluster"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(cl.dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	cl.env = map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok && !strings.HasPrefix(line, "#") {
			cl.env[k] = strings.Trim(v, `"`)
		}
	}
	return cl
}

func (cl *cluster) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(time.Minute, cl.dir, []string{"KUBECACHEDIR=" + filepath.Join(cl.dir, "kube-cache")},
		cl.env["KUBECTL"], append([]string{"--kubeconfig", cl.env["KUBECONFIG"]}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (cl *cluster) pki(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(cl.dir, "pki", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// serviceAccountKubeconfig authenticates as system:serviceaccount:kube-system:osm-apiserver
// (hack/lib/certs.sh's client certificate), what the pod's in-cluster config would.
func (cl *cluster) serviceAccountKubeconfig(t *testing.T) []byte {
	t.Helper()
	b64 := func(name string) string { return base64.StdEncoding.EncodeToString(cl.pki(t, name)) }
	return []byte(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:` + cl.env["KUBE_PORT"] + `
    certificate-authority-data: ` + b64("ca.crt") + `
users:
- name: osm-apiserver
  user:
    client-certificate-data: ` + b64("osm-apiserver-client.crt") + `
    client-key-data: ` + b64("osm-apiserver-client.key") + `
contexts:
- name: local
  context: {cluster: local, user: osm-apiserver}
current-context: local
`)
}
