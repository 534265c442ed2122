package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/syncer"
)

// MachineDeployments that name no profile render from their operating
// system's default, the one upstream OSM's webhook would have set: osp-<os>,
// and osp-flatcar-cloud-init for Flatcar on Anexia provisioned with
// cloud-init. One whose operating system has none shows why in its OSC and in
// a Warning Event. The defaults are osm-apiserver's own, installed at start.
func TestProfilesAreDefaultedForEachOperatingSystem(t *testing.T) {
	ns := createNamespace(t, fmt.Sprintf("e2e-defaults-%d", time.Now().UnixNano()%1_000_000_000))
	cases := []struct {
		md, cloud, os, osSpec string
		want                  string // "" when the operating system has no default
	}{
		{md: "ubuntu", cloud: "aws", os: "ubuntu", osSpec: `{"distUpgradeOnBoot":false}`, want: "osp-ubuntu"},
		{md: "rhel", cloud: "aws", os: "rhel", osSpec: `{}`, want: "osp-rhel"},
		{md: "rockylinux", cloud: "aws", os: "rockylinux", osSpec: `{}`, want: "osp-rockylinux"},
		{md: "amzn2", cloud: "aws", os: "amzn2", osSpec: `{}`, want: "osp-amzn2"},
		{md: "flatcar", cloud: "aws", os: "flatcar", osSpec: `{}`, want: "osp-flatcar"},
		{md: "flatcar-anexia", cloud: "anexia", os: "flatcar", osSpec: `{"provisioningUtility":"cloud-init"}`, want: "osp-flatcar-cloud-init"},
		{md: "sles", cloud: "aws", os: "sles", osSpec: `{}`},
	}
	for _, c := range cases {
		md := syncerMD(ns, c.md, "", "1")
		delete(md.Annotations, machinecontroller.AnnotationOSP)
		md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(fmt.Sprintf(
			`{"cloudProvider":%q,"cloudProviderSpec":{},"operatingSystem":%q,"operatingSystemSpec":%s,"sshPublicKeys":["ssh-ed25519 AAAA e2e@osm"]}`,
			c.cloud, c.os, c.osSpec))}
		createMD(t, md)
	}
	ctx := testContext(t)
	oscs := env.osm.OsmV1alpha1().OperatingSystemConfigs(ns)
	for _, c := range cases {
		t.Run(c.md, func(t *testing.T) {
			eventually(t, time.Minute, func() error {
				osc, err := oscs.Get(ctx, c.md, getOptions())
				if err != nil {
					return err
				}
				s := osc.Status
				if c.want == "" {
					if want := fmt.Sprintf("operating system %q has no default", c.os); !strings.Contains(s.RenderError, want) {
						return fmt.Errorf("renderError %q, want %q", s.RenderError, want)
					}
					return nil
				}
				switch {
				case s.Profile.Name != c.want || s.Profile.Namespace != "kube-system" || !s.Profile.Defaulted:
					return fmt.Errorf("profile %+v, want kube-system/%s, defaulted", s.Profile, c.want)
				case s.RenderError != "" || s.Pending != "":
					return fmt.Errorf("not rendered: %s%s", s.RenderError, s.Pending)
				}
				return nil
			})
			if c.want == "" {
				return
			}
			// The syncer writes its Secrets as for any other MD.
			payloadSecret(t, ns, c.md, "bootstrap", func(s *corev1.Secret) error {
				if s.Annotations[machinecontroller.AnnotationSecretMDRevision] != "1" {
					return fmt.Errorf("%s: revision %q", s.Name, s.Annotations[machinecontroller.AnnotationSecretMDRevision])
				}
				return nil
			})
		})
	}

	eventually(t, time.Minute, func() error {
		events, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=sles"})
		if err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == syncer.ReasonNoDefaultProfile && e.Type == corev1.EventTypeWarning &&
				strings.Contains(e.Message, `operating system "sles" has no default`) {
				return nil
			}
		}
		return fmt.Errorf("no Warning %s Event on MD sles among %d", syncer.ReasonNoDefaultProfile, len(events.Items))
	})
	out := kubectl(t, "get", "osc", "-n", ns)
	lines := strings.Split(out, "\n")
	if row := rowOf(lines, "flatcar-anexia"); !strings.Contains(row, "osp-flatcar-cloud-init@") || !strings.Contains(row, "(default)") {
		t.Errorf("kubectl get osc: row %q should name the profile as the default", row)
	}
	if row := rowOf(lines, "sles"); !strings.Contains(row, "Error: ") {
		t.Errorf("kubectl get osc: row %q should show the error", row)
	}
}
