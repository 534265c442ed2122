package review

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("differs from %s (run with -update to accept):\n%s", path, got)
	}
}

func file(path, data string) osm.File {
	return osm.File{Path: path, Permissions: 644, Content: osm.FileContent{Inline: &osm.FileContentInline{Data: data}}}
}

func side(size int64, sha string, prov osm.OSCConfig) Side {
	return Side{
		Config:       &osm.OperatingSystemConfigSpec{CloudProvider: osm.CloudProviderSpec{Name: "aws"}, ProvisioningConfig: prov},
		Bootstrap:    Payload{Size: size, SHA256: sha},
		Provisioning: Payload{Size: 30000, SHA256: "p"},
	}
}

func TestCompare(t *testing.T) {
	yes := true
	before := side(15000, "b1", osm.OSCConfig{
		Files:            []osm.File{file("/etc/a", "one\ntwo\nthree\n"), file("/etc/gone", "x\n")},
		Units:            []osm.Unit{{Name: "kubelet.service", Content: ptr("[Service]\n")}},
		CloudInitModules: &osm.CloudInitModule{RunCMD: []string{"systemctl daemon-reload"}},
	})
	after := side(17000, "b2", osm.OSCConfig{
		Files: []osm.File{file("/etc/a", "one\n2\nthree\n"), file("/etc/new", "new")},
		Units: []osm.Unit{{Name: "kubelet.service", Enable: &yes, Content: ptr("[Service]\n"),
			DropIns: []osm.DropIn{{Name: "10-x.conf", Content: "[Service]\nEnvironment=X=1\n"}}}},
		CloudInitModules: &osm.CloudInitModule{RunCMD: []string{"systemctl daemon-reload", "echo hi"},
			YumRepos: map[string]map[string]string{"epel": {"baseurl": "https://mirror/epel", "enabled": "1"}}},
	})
	after.Overlays = []osm.OverlayReference{{Namespace: "kube-system", Name: "ca", Generation: 2}}
	r := Compare(before, after, NewDiffer())
	r.Namespace, r.Name = "team-a", "pool"
	if !r.Changed || !r.Bootstrap.OverLimit || r.Bootstrap.UserDataLimit != 16*1024 {
		t.Errorf("changed %t, bootstrap %+v", r.Changed, r.Bootstrap)
	}
	var b strings.Builder
	if err := WriteText(&b, &r); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare", b.String())
}

func TestCompareUnchangedFailedPending(t *testing.T) {
	cfg := osm.OSCConfig{Files: []osm.File{file("/etc/a", "a\n")}}
	if r := Compare(side(100, "x", cfg), side(100, "x", cfg), NewDiffer()); r.Changed || len(r.Files) != 0 {
		t.Errorf("the same render: %+v", r)
	}
	failed := Side{Err: "overlay team/o: provisioningConfig file /etc/x: template: line 1: boom"}
	if r := Compare(side(100, "x", cfg), failed, NewDiffer()); r.Changed || r.Error != failed.Err || r.Bootstrap.SizeAfter != 0 {
		t.Errorf("a failing candidate changes nothing, says why: %+v", r)
	}
	if r := Compare(failed, side(100, "x", cfg), NewDiffer()); !r.Changed || r.PreviousError == "" {
		t.Errorf("a candidate that fixes a render: %+v", r)
	}
	pending := Side{Pending: "waiting for the syncer to create tokens"}
	if r := Compare(pending, pending, NewDiffer()); r.Changed || r.Pending == "" || len(r.Files) != 0 {
		t.Errorf("pending: %+v", r)
	}
}

// TestDifferLimits: a diff is cut, an item too large is not diffed, and the
// diffs of one review stop at their budget.
func TestDifferLimits(t *testing.T) {
	d := NewDiffer()
	big := strings.Repeat("line\n", maxDiffInput/5+1)
	if got := d.Diff("f", "", big); !strings.HasPrefix(got, "(not diffed: 0 and ") {
		t.Errorf("too large: %q", got)
	}
	long := strings.Repeat("a line of an added file\n", 4000)
	if got := d.Diff("f", "", long); len(got) > maxDiff+100 || !strings.Contains(got, "(cut: ") {
		t.Errorf("cut: %d bytes, %q", len(got), got[len(got)-40:])
	}
	for i := 0; d.spent+maxDiff <= maxDiffs; i++ {
		d.Diff("f", "", strings.Repeat("x", i%7)+long)
	}
	if got := d.Diff("f", "", long+"!"); !strings.Contains(got, "exceed 8 MiB") {
		t.Errorf("after the budget: %.80q", got)
	}
}

func ptr[T any](v T) *T { return &v }
