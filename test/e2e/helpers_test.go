package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
)

var (
	mdResource  = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinedeployments"}
	ospResource = schema.GroupVersionResource{Group: "operatingsystemmanager.k8c.io", Version: "v1alpha1", Resource: "operatingsystemprofiles"}
)

// kubectl runs the kubectl built for the tests against the test cluster; it fails
// the test on a non-zero exit and returns stdout.
func kubectl(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := kubectlCtx(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// kubectlFails runs kubectl, expects it to fail, and returns its stderr.
func kubectlFails(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := kubectlCtx(ctx, args...)
	if err == nil {
		t.Fatalf("kubectl %s succeeded, want an error; output:\n%s", strings.Join(args, " "), out)
	}
	return err.Error()
}

func kubectlCtx(ctx context.Context, args ...string) (string, error) {
	return kubectlAt(ctx, env.kubeconfig, args...)
}

// kubectlAt runs kubectl against the cluster of kubeconfig and returns stdout.
func kubectlAt(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, env.kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	// kubectl caches discovery per host:port; random ports would litter ~/.kube/cache.
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+filepath.Join(env.dir, "kube-cache"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// poll calls check every 200 ms until it returns nil, ctx ends or timeout passes;
// the error names the last failure.
func poll(ctx context.Context, timeout time.Duration, check func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("still failing after %s: %w", timeout, err)
		case <-tick.C:
		}
	}
}

// eventually is poll for tests.
func eventually(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	if err := poll(context.Background(), timeout, check); err != nil {
		t.Fatal(err)
	}
}

// testContext returns a context bounded for one test.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func getOptions() metav1.GetOptions { return metav1.GetOptions{} }

// fileData returns the decoded content of the OSC file at path, failing the test if
// there is none.
func fileData(t testing.TB, files []osmv1alpha1.File, path string) string {
	t.Helper()
	for _, f := range files {
		if f.Path != path {
			continue
		}
		if f.Content.Inline == nil {
			t.Fatalf("%s has no inline content", path)
		}
		return decode(t, path, f.Content.Inline.Encoding, f.Content.Inline.Data)
	}
	t.Fatalf("no file %s", path)
	return ""
}

// cloudConfigFile returns the decoded content of the write_files entry at path of a
// #cloud-config document.
func cloudConfigFile(t testing.TB, userData, path string) string {
	t.Helper()
	var cfg struct {
		WriteFiles []struct {
			Path     string `json:"path"`
			Encoding string `json:"encoding"`
			Content  string `json:"content"`
		} `json:"write_files"`
	}
	if err := yaml.Unmarshal([]byte(userData), &cfg); err != nil {
		t.Fatalf("user-data is not YAML: %v", err)
	}
	for _, f := range cfg.WriteFiles {
		if f.Path == path {
			return decode(t, path, f.Encoding, f.Content)
		}
	}
	t.Fatalf("user-data writes no file %s", path)
	return ""
}

func decode(t testing.TB, path, encoding, data string) string {
	t.Helper()
	switch encoding {
	case "":
		return data
	case "b64", "base64":
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return string(b)
	}
	t.Fatalf("%s: unexpected encoding %q", path, encoding)
	return ""
}
