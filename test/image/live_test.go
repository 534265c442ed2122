package image

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestDeploymentBecomesReady runs the pod artifacts/deploy describes without a
// kubelet: the image's binary with the Deployment's arguments, as the image's
// user, with no environment, and the ServiceAccount's identity bound by the
// manifests' RBAC (its serving certificate is its own, in a Secret), against
// a local cluster. Its probes must succeed as the kubelet runs them (HTTPS, certificate
// not verified), and it must stop on SIGTERM within the grace period.
func TestDeploymentBecomesReady(t *testing.T) {
	b := makeImage(t)
	objects := kustomize(t, filepath.Join(repo(), "artifacts", "deploy"))
	d := deployment(t, objects)
	c := d.Spec.Template.Spec.Containers[0]
	cl := startCluster(t)
	var rbac []string
	for _, o := range objects {
		switch o.GetKind() {
		case "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			rbac = append(rbac, toYAML(t, o))
		}
	}
	manifest := filepath.Join(cl.dir, "rbac.yaml")
	if err := os.WriteFile(manifest, []byte(strings.Join(rbac, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	cl.kubectl(t, "apply", "--server-side", "-f", manifest)

	started := time.Now()
	osm := startPod(t, b, d, c, cl, "osm-apiserver", "")
	port, exited, showLog := osm.port, osm.exited, osm.showLog
	for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
		url := fmt.Sprintf("%s://127.0.0.1:%s%s", strings.ToLower(string(p.HTTPGet.Scheme)), port, p.HTTPGet.Path)
		if err := probe(url, exited); err != nil {
			showLog()
			t.Fatalf("probe %s: %v", url, err)
		}
	}
	t.Logf("probes answer 200 %s after start", time.Since(started).Round(time.Millisecond))
	stopping := time.Now()
	if err := osm.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	grace := 30 * time.Second // Kubernetes's default terminationGracePeriodSeconds
	if s := d.Spec.Template.Spec.TerminationGracePeriodSeconds; s != nil {
		grace = time.Duration(*s) * time.Second
	}
	select {
	case <-exited:
		t.Logf("exited %s after SIGTERM", time.Since(stopping).Round(time.Millisecond))
		if *osm.exitErr != nil {
			showLog()
			t.Errorf("osm-apiserver exited with %v after SIGTERM, want 0", *osm.exitErr)
		}
	case <-time.After(grace):
		showLog()
		t.Errorf("osm-apiserver still runs %s after SIGTERM: the kubelet would kill it", grace)
	}
}

// probe GETs url the way the kubelet's HTTPS probe does until it answers 200.
func probe(url string, exited <-chan struct{}) error {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the kubelet does not verify probes
	}}
	deadline := time.Now().Add(2 * time.Minute)
	last := errors.New("no answer")
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("osm-apiserver exited (last probe: %w)", last)
		case <-time.After(500 * time.Millisecond):
		}
		resp, err := client.Get(url)
		if err != nil {
			last = err
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		last = fmt.Errorf("status %s", resp.Status)
	}
	return fmt.Errorf("not 200 within 2 minutes: %w", last)
}

func freePort(t *testing.T) string {
	t.Helper()
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return itoa(int64(port))
}

func toYAML(t *testing.T, o *unstructured.Unstructured) string {
	t.Helper()
	data, err := yaml.Marshal(o.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// inSandbox rewrites a --flag=path under a volume's mount path to the
// sandbox directory that holds the volume (the longest mount path wins).
func inSandbox(arg string, mounts map[string]string) string {
	flag, value, ok := strings.Cut(arg, "=")
	if !ok {
		return arg
	}
	best := ""
	for from := range mounts {
		if strings.HasPrefix(value, from+"/") && len(from) > len(best) {
			best = from
		}
	}
	if best == "" {
		return arg
	}
	return flag + "=" + mounts[best] + strings.TrimPrefix(value, best)
}

// pod is the image's binary running as the Deployment's container would.
type pod struct {
	port    string // its --secure-port
	cmd     *exec.Cmd
	exited  <-chan struct{} // closed once it exited, with *exitErr
	exitErr *error
	log     string
	t       *testing.T
}

// startPod runs the image's binary with the container's arguments (its
// --secure-port replaced by port, a free one if empty, file arguments pointing into its
// volumes, plus extraArgs), as the image's user, with no environment, and
// the ServiceAccount's identity where the pod gets its in-cluster config,
// until the test ends. name names its log in cl's directory.
func startPod(t *testing.T, b built, d *appsv1.Deployment, c corev1.Container, cl *cluster, name, port string, extraArgs ...string) *pod {
	t.Helper()
	sb := newSandbox(t)
	cf, err := b.img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	exe := sb.file(t, "rootfs"+cf.Config.Entrypoint[0], imageFiles(t, b.img)[strings.TrimPrefix(cf.Config.Entrypoint[0], "/")].data, 0o755)
	mounts := sb.volumes(t, d, c, cl)
	if port == "" {
		port = freePort(t)
	}
	args := []string{}
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--secure-port=") {
			a = "--secure-port=" + port
		}
		args = append(args, inSandbox(a, mounts))
	}
	// What the pod gets elsewhere: its IP (here loopback) and in-cluster config.
	args = append(args, "--bind-address=127.0.0.1", "--kubeconfig="+sb.file(t, "serviceaccount/kubeconfig", cl.serviceAccountKubeconfig(t), 0o644))
	args = append(args, extraArgs...)

	log, err := os.Create(filepath.Join(cl.dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = log.Close() })
	cmd := exec.Command(exe, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = filepath.Dir(exe), []string{}, log, log
	if os.Geteuid() == 0 { // as the image's user, as the container runtime would
		var uid, gid uint32
		if _, err := fmt.Sscanf(cf.Config.User, "%d:%d", &uid, &gid); err != nil {
			t.Fatalf("image user %q: %v", cf.Config.User, err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var exitErr error
	exited := make(chan struct{})
	go func() { exitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	return &pod{port: port, cmd: cmd, exited: exited, exitErr: &exitErr, log: log.Name(), t: t}
}

// showLog logs the pod's log.
func (p *pod) showLog() {
	data, _ := os.ReadFile(p.log)
	p.t.Logf("%s:\n%s", filepath.Base(p.log), data)
}
