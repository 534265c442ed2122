package cloudinit

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
)

// casesDir holds upstream's rendered examples; see its README.md.
const casesDir = "../../../../shared/upstream-osm/cases"

// upstreamCase is one of upstream's rendered examples: its OSC and its user-data.
type upstreamCase struct {
	name     string
	osc      osm.OperatingSystemConfig
	expected map[osm.PayloadType][]byte
}

// loadUpstreamCases reads every case folder, skipping the test when ../shared is
// absent (it is not part of this repository).
func loadUpstreamCases(t testing.TB) []upstreamCase {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(casesDir, "*", "expected-osc.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Skipf("upstream cases not found in %s (the shared data is outside this repository)", casesDir)
	}
	var cases []upstreamCase
	for _, p := range dirs {
		dir := filepath.Dir(p)
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var ext v1alpha1.OperatingSystemConfig
		if err := yaml.Unmarshal(raw, &ext); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		c := upstreamCase{name: filepath.Base(dir), expected: map[osm.PayloadType][]byte{}}
		if err := v1alpha1.Convert_v1alpha1_OperatingSystemConfig_To_osm_OperatingSystemConfig(&ext, &c.osc, nil); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, pt := range []osm.PayloadType{osm.PayloadTypeBootstrap, osm.PayloadTypeProvisioning} {
			if c.expected[pt], err = os.ReadFile(filepath.Join(dir, "expected-"+string(pt)+".userdata")); err != nil {
				t.Fatal(err)
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// encodeCase encodes one payload of a case with upstream's hostname rule.
func encodeCase(t testing.TB, c upstreamCase, pt osm.PayloadType) []byte {
	t.Helper()
	cfg := c.osc.Spec.BootstrapConfig
	if pt == osm.PayloadTypeProvisioning {
		cfg = c.osc.Spec.ProvisioningConfig
	}
	out, err := Encode(cfg, Options{Hostname: Hostname(pt, c.osc.Spec.CloudProvider.Name, c.name)})
	if err != nil {
		t.Fatalf("%s %s: %v", c.name, pt, err)
	}
	return out
}

// TestUpstreamCases checks that our payloads mean what upstream's mean: same
// files (path, mode, decoded content up to a final newline), SSH keys, hostname
// and modules (null values being absent).
func TestUpstreamCases(t *testing.T) {
	for _, c := range loadUpstreamCases(t) {
		for pt, want := range c.expected {
			t.Run(c.name+"/"+string(pt), func(t *testing.T) {
				got := meaning(t, encodeCase(t, c, pt))
				exp := meaning(t, want)
				if !reflect.DeepEqual(got, exp) {
					for k := range exp {
						if !reflect.DeepEqual(got[k], exp[k]) {
							t.Errorf("%s differs:\n got: %#v\nwant: %#v", k, got[k], exp[k])
						}
					}
					for k := range got {
						if _, ok := exp[k]; !ok {
							t.Errorf("unexpected %s: %#v", k, got[k])
						}
					}
				}
			})
		}
	}
}

// meaning decodes a cloud-config into what cloud-init acts on: write_files keyed
// by path as "mode|content" with content decoded, null values dropped.
func meaning(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml3.Unmarshal(doc, &m); err != nil {
		t.Fatalf("decode: %v\n%s", err, doc)
	}
	out := map[string]any{}
	for k, v := range m {
		if k != "write_files" {
			out[k] = dropNulls(v)
			continue
		}
		for _, f := range v.([]any) {
			f := f.(map[string]any)
			content, _ := f["content"].(string)
			if f["encoding"] == "b64" {
				d, err := base64.StdEncoding.DecodeString(content)
				if err != nil {
					t.Fatalf("%s: %v", f["path"], err)
				}
				content = string(d)
			}
			out["file "+f["path"].(string)] = f["permissions"].(string) + "|" + strings.TrimSuffix(content, "\n")
		}
	}
	return out
}

func dropNulls(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for k, x := range m {
		if x == nil {
			delete(m, k)
		}
	}
	return m
}
