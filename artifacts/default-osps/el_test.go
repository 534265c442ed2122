package defaultosps

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestELNoCurlInstall: EL9 images ship curl-minimal, which conflicts with the
// curl package; the bootstrap already fetched with whichever is there.
func TestELNoCurlInstall(t *testing.T) {
	for _, name := range []string{"osp-rhel", "osp-rockylinux"} {
		for _, cloud := range []string{"aws", "azure", "vsphere", "kubevirt"} {
			setup := renderOSP(t, name, cloud, "", nil).provisioning["/opt/bin/osm-setup"]
			for _, line := range strings.Split(setup, "\n") {
				f := strings.Fields(line)
				if len(f) > 2 && (f[0] == "dnf" || f[0] == "yum") && f[1] == "install" &&
					slices.Contains(f, "curl") && !slices.Contains(f, "--allowerasing") {
					t.Errorf("%s/%s: %q conflicts with curl-minimal", name, cloud, strings.TrimSpace(line))
				}
			}
		}
	}
}

// TestAzureELDualStackIPv6 runs the IPv6 step of osm-setup of osp-rhel and
// osp-rockylinux on Azure with a dual-stack MD, with nmcli and ip as stubs: a
// profile that leaves IPv6 off gets ipv6.method auto and is reapplied, one
// with IPv6 configured is left alone. Other clouds and IPv4 MDs have no such step.
func TestAzureELDualStackIPv6(t *testing.T) {
	requireSandbox(t)
	for _, name := range []string{"osp-rhel", "osp-rockylinux"} {
		for _, tc := range []struct{ cloud, family string }{{"azure", ""}, {"aws", "IPv4+IPv6"}, {"azure", "IPv6"}} {
			if setup := renderOSP(t, name, tc.cloud, tc.family, nil).provisioning["/opt/bin/osm-setup"]; strings.Contains(setup, "nmcli") {
				t.Errorf("%s/%s/%q: osm-setup changes NetworkManager profiles", name, tc.cloud, tc.family)
			}
		}
		for _, family := range []string{"IPv4+IPv6", "IPv6+IPv4"} {
			setup := renderOSP(t, name, "azure", family, nil).provisioning["/opt/bin/osm-setup"]
			step := paragraph(t, setup, "# Azure hands out IPv6")
			for method, wantModify := range map[string]bool{"ignore": true, "disabled": true, "auto": false, "dhcp": false} {
				t.Run(fmt.Sprintf("%s/%s/ipv6.method-%s", name, family, method), func(t *testing.T) {
					s := newSandbox(t)
					s.env = []string{"OSM_TEST_METHOD=" + method, "OSM_TEST_STATE=/osm-test/v6-up"}
					s.stub("ip", `case "$*" in
  "-o -4 route show default") echo "default via 10.0.0.1 dev eth0 proto dhcp src 10.0.0.4 metric 100" ;;
  "-6 route show default") if [ -e "$OSM_TEST_STATE" ] || { [ "$OSM_TEST_METHOD" != ignore ] && [ "$OSM_TEST_METHOD" != disabled ]; }; then
      echo "default via fe80::1234:5678:9abc dev eth0 proto ra metric 100 pref medium"; fi ;;
  *) exit 1 ;;
esac`)
					s.stub("nmcli", `case "$*" in
  "-g GENERAL.CONNECTION device show eth0") echo "System eth0" ;;
  "-g ipv6.method connection show System eth0") echo "$OSM_TEST_METHOD" ;;
  "connection modify System eth0 ipv6.method auto ipv6.may-fail yes") ;;
  "device reapply eth0") touch "$OSM_TEST_STATE" ;;
  *) exit 10 ;;
esac`)
					s.stub("sleep", "")
					run := s.run(t, "set -euo pipefail\n"+step+"\n")
					if run.err != nil {
						t.Fatalf("IPv6 step: %v\n%s\ncalls:\n%s", run.err, run.out, strings.Join(run.calls, "\n"))
					}
					modified := len(run.called("nmcli connection modify System eth0 ipv6.method auto")) == 1 &&
						len(run.called("nmcli device reapply eth0")) == 1
					if modified != wantModify {
						t.Errorf("profile with ipv6.method %s changed: %v, want %v; calls:\n%s", method, modified, wantModify, strings.Join(run.calls, "\n"))
					}
					if strings.Contains(run.out, "no IPv6 default route") {
						t.Errorf("the step did not see the IPv6 default route: %s", run.out)
					}
				})
			}
		}
	}
}
