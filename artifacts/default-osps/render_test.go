package defaultosps

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// serverURL is the API server the test cluster's nodes reach.
const serverURL = "https://api.cluster.example.com:6443"

// proxyURL is the nodes' HTTP proxy.
const proxyURL = "http://proxy.example.com:3128"

// maxBootstrapBytes is AWS's user-data limit, the smallest of the clouds.
const maxBootstrapBytes = 16384

// ipFamilies are the network setups every profile is rendered for; "" is IPv4.
var ipFamilies = map[string]string{"ipv4": "", "dualstack": "IPv4+IPv6"}

// TestRender renders every default profile for every cloud it lists, IPv4 and
// dual-stack, and checks what a node would run: valid cloud-config or Ignition,
// shell scripts that parse and pass shellcheck, verified TLS for downloads, and
// a bootstrap payload within the user-data limit.
func TestRender(t *testing.T) {
	requireTools(t, "cloud-init", "shellcheck", "bash")
	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	ca := testCA(t)
	renderer := render.NewRenderer()
	checked := &checkCache{}
	for _, osp := range osps {
		for _, cloud := range osp.Spec.SupportedCloudProviders {
			for famName, family := range ipFamilies {
				t.Run(fmt.Sprintf("%s/%s/%s", osp.Name, cloud.Name, famName), func(t *testing.T) {
					t.Parallel()
					in := renderInput(ca, family != "")
					in.OSP = osp
					in.MachineDeployment = machineDeployment(t, osp, string(cloud.Name), family)
					res, err := renderer.Render(in)
					if err != nil {
						t.Fatalf("render: %v", err)
					}
					if n := len(res.Bootstrap.UserData); n > maxBootstrapBytes {
						t.Errorf("bootstrap payload is %d bytes with 4 KiB of SSH keys, limit %d", n, maxBootstrapBytes)
					}
					bootstrapSizes.record(osp.Name, len(res.Bootstrap.UserData))
					if files := checkPayload(t, checked, "bootstrap", res.Bootstrap); files != nil {
						checkBootstrapFiles(t, files, ca)
					}
					if files := checkPayload(t, checked, "provisioning", res.Provisioning); files != nil {
						checkProvisioningFiles(t, files, family != "", family != "")
					}
				})
			}
		}
	}
}

// checkPayload validates one payload and every script it writes, and returns
// its files; nil when the payload itself is invalid.
func checkPayload(t *testing.T, checked *checkCache, name string, p render.Payload) []payloadFile {
	t.Helper()
	var files []payloadFile
	var err error
	switch p.Format {
	case osm.PayloadFormatIgnition:
		files, err = ignitionFiles(p.UserData)
	default:
		if err = checked.run("cloud-init", p.UserData, cloudInitSchema); err == nil {
			files, err = cloudConfigFiles(p.UserData)
		}
	}
	if err != nil {
		t.Errorf("%s payload: %v", name, err)
		return nil
	}
	texts := []string{string(p.UserData)}
	for _, f := range files {
		texts = append(texts, f.content)
	}
	for _, text := range texts {
		for _, cmd := range insecureDownloads(text) {
			t.Errorf("%s payload: download without TLS verification: %s", name, cmd)
		}
	}
	if len(scripts(files)) == 0 {
		t.Errorf("%s payload writes no scripts", name)
	}
	for _, s := range scripts(files) {
		if err := checked.run("script", []byte(s.content), checkScript); err != nil {
			t.Errorf("%s payload: %s: %v", name, s.path, err)
		}
		for _, u := range hardcodedURLs(s.content, serverURL, proxyURL) {
			t.Errorf("%s payload: %s: download URL %s cannot be redirected by an OSM_* variable", name, s.path, u)
		}
		if s.path == "/opt/bin/osm-setup" {
			checkDownloadDefaults(t, s.content)
		}
	}
	return files
}

// checkDownloadDefaults checks that the setup script reads every download
// location from an OSM_* variable with a usable default.
func checkDownloadDefaults(t *testing.T, script string) {
	t.Helper()
	defaults := downloadDefaults(script)
	for _, v := range []string{"OSM_KUBERNETES_URL", "OSM_CNI_URL", "OSM_CNI_VERSION", "OSM_CRICTL_URL"} {
		if _, ok := defaults[v]; !ok {
			t.Errorf("osm-setup does not read %s", v)
		}
	}
	for v, d := range defaults {
		if strings.HasSuffix(v, "_URL") || strings.HasSuffix(v, "_REPO") {
			if !strings.HasPrefix(d, "https://") {
				t.Errorf("osm-setup: default of %s is %q, want an https URL", v, d)
			}
		} else if d == "" || strings.ContainsAny(d, " \t") {
			t.Errorf("osm-setup: default of %s is %q", v, d)
		}
	}
}

// cloudInitSchema runs Debian's cloud-init schema validation on a cloud-config.
func cloudInitSchema(dir string, data []byte) error {
	path := filepath.Join(dir, "user-data")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	out, err := exec.Command("cloud-init", "schema", "--config-file", path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("cloud-init schema: %w: %s", err, out)
	}
	return nil
}

// checkScript runs bash -n and shellcheck -S error on a script.
func checkScript(dir string, data []byte) error {
	path := filepath.Join(dir, "script")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
		return fmt.Errorf("bash -n: %w: %s", err, out)
	}
	if out, err := exec.Command("shellcheck", "-S", "error", "-s", "bash", path).CombinedOutput(); err != nil {
		return fmt.Errorf("shellcheck -S error: %w: %s", err, out)
	}
	return nil
}

// checkCache runs each check once per distinct input: many clouds render the
// same payload, and cloud-init takes half a second per run.
type checkCache struct {
	mu      sync.Mutex
	results map[string]*checkResult
}

type checkResult struct {
	once sync.Once
	err  error
}

func (c *checkCache) run(kind string, data []byte, check func(dir string, data []byte) error) error {
	key := kind + "\x00" + string(data)
	c.mu.Lock()
	if c.results == nil {
		c.results = map[string]*checkResult{}
	}
	r, ok := c.results[key]
	if !ok {
		r = &checkResult{}
		c.results[key] = r
	}
	c.mu.Unlock()
	r.once.Do(func() {
		dir, err := os.MkdirTemp("", "osp-check-")
		if err != nil {
			r.err = err
			return
		}
		defer func() { _ = os.RemoveAll(dir) }() // a temp dir: leftovers are harmless
		r.err = check(dir, data)
	})
	return r.err
}

// requireTools fails the test when a validator is missing: `make test-deps`
// (hack/install-test-deps.sh) installs them.
func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	var missing []string
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("missing %s; run hack/install-test-deps.sh", strings.Join(missing, ", "))
	}
}
