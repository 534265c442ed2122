package defaultosps

import (
	"regexp"
	"strings"
	"testing"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// TestOperatorPath: crictl and kubectl are installed, and an operator's shell
// (and sudo) finds them: /opt/bin is on Flatcar's PATH, the other systems get
// links in /usr/local/bin.
func TestOperatorPath(t *testing.T) {
	osps, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	kubectl := regexp.MustCompile(`(?m)^\s*for bin in kubelet kubectl; do\n\s*fetch "\$kube_url/\$kube_version/bin/linux/\$arch/\$bin" "\$tmp/\$bin"\n\s*verify "\$tmp/\$bin" "\$kube_url/\$kube_version/bin/linux/\$arch/\$bin\.sha256"\n\s*install -m 0755 "\$tmp/\$bin" "/opt/bin/\$bin"\n\s*done$`)
	links := regexp.MustCompile(`(?m)^\s*for bin in crictl kubectl; do ln -sfn "/opt/bin/\$bin" "/usr/local/bin/\$bin"; done$`)
	for _, osp := range osps {
		setup := setupScript(t, osp)
		if !kubectl.MatchString(setup) {
			t.Errorf("%s: osm-setup does not install a verified kubectl into /opt/bin", osp.Name)
		}
		if !strings.Contains(setup, `tar -C /opt/bin -xzf "$tmp/$crictl_tgz"`) {
			t.Errorf("%s: osm-setup does not install crictl into /opt/bin", osp.Name)
		}
		if wantLinks := osp.Spec.OSName != ospv1alpha1.OperatingSystemFlatcar; links.MatchString(setup) != wantLinks {
			t.Errorf("%s: osm-setup links crictl and kubectl into /usr/local/bin: %v, want %v", osp.Name, !wantLinks, wantLinks)
		}
	}
}

// setupScript renders a profile for its first cloud and returns osm-setup.
func setupScript(t *testing.T, osp *ospv1alpha1.OperatingSystemProfile) string {
	t.Helper()
	in := renderInput(testCA(t), false)
	in.OSP = osp
	in.MachineDeployment = machineDeployment(t, osp, string(osp.Spec.SupportedCloudProviders[0].Name), "")
	res, err := render.NewRenderer().Render(in)
	if err != nil {
		t.Fatalf("%s: render: %v", osp.Name, err)
	}
	return payloadFileContent(t, res.Provisioning, "/opt/bin/osm-setup")
}
