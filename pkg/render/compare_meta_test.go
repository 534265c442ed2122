package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// TestCloudInitComparison checks the comparison TestUpstreamCases relies on:
// quoting and key order do not matter, a changed mode, file content, module or
// hostname does.
func TestCloudInitComparison(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(upstreamDir(t), "cases", "rhel-8.x-cloud-init-modules", "expected-bootstrap.userdata"))
	if err != nil {
		t.Fatal(err)
	}
	replace := func(old, new string) []byte {
		t.Helper()
		if !bytes.Contains(want, []byte(old)) {
			t.Fatalf("expected user-data lacks %q", old)
		}
		return bytes.Replace(want, []byte(old), []byte(new), 1)
	}
	tests := []struct {
		name  string
		got   []byte
		diffs int // 0: equivalent
	}{
		{"itself", want, 0},
		{"other quoting", replace("  permissions: '0755'", `  permissions: "0755"`), 0},
		{"keys reordered", append(replace("ssh_pwauth: false\n", ""), "ssh_pwauth: false\n"...), 0},
		{"mode", replace("  permissions: '0755'", "  permissions: '0750'"), 1},
		{"runcmd", replace("- systemctl daemon-reload\n", ""), 1},
		{"hostname", replace("ssh_pwauth: false\n", "hostname: '<MACHINE_NAME>'\nssh_pwauth: false\n"), 1},
		{"ssh key", replace("DdOIhYmzCK5DSVLu3c", "DdOIhYmzCK5DSVLu3d"), 1},
		{"content", replace("IyEvYmluL2Jhc2gKc2V0IC14ZXVvIHBpcGVmYWlsCndoaWxlICEgIiRAIjsgZG8KICBzbGVlcCAxCmRvbmUK",
			"IyEvYmluL2Jhc2gKc2V0IC14ZXVvIHBpcGVmYWlsCndoaWxlICEgIiRAIjsgZG8KICBzbGVlcCAyCmRvbmUK"), 1},
		{"missing file", replace("- path: '/opt/bin/supervise.sh'", "- path: '/opt/bin/supervise2.sh'"), 2},
	}
	for _, tc := range tests {
		diffs := diffUserData(t, want, render.Payload{Format: osm.PayloadFormatCloudInit, UserData: tc.got})
		if len(diffs) != tc.diffs {
			t.Errorf("%s: %d diffs, want %d:\n%s", tc.name, len(diffs), tc.diffs, strings.Join(diffs, "\n"))
		}
	}
}
