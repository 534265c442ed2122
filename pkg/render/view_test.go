package render

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// The view (Input.View) renders from placeholders for the secrets only the
// render sees: RHEL subscription credentials, the in-tree cloud-config and
// the cloudProviderSpec.
func TestViewRedactsProviderSpecSecrets(t *testing.T) {
	in := goldenInput(t)
	in.OSP.Spec.OSName = "rhel"
	in.OSP.Spec.SupportedCloudProviders = append(in.OSP.Spec.SupportedCloudProviders, ospv1alpha1.CloudProviderSpec{Name: "openstack"})
	in.OSP.Spec.ProvisioningConfig.Files[0].Content.Inline.Data = `{{ .CloudConfig }}|{{ .RhelConfig.RHELSubscriptionManagerPassword }}|{{ .RhelConfig.RHELActivationKey | b64enc }}|{{ toJson .RHSubscription }}`
	in.MachineDeployment = testMachineDeployment(map[string]string{machinecontroller.AnnotationOSP: "osp-golden"},
		`{"cloudProvider":"openstack","cloudProviderSpec":{"identityEndpoint":"https://keystone","username":"u","password":"os-pass-0123","domainName":"d","tenantName":"t","region":"r"},`+
			`"operatingSystem":"rhel","operatingSystemSpec":{"rhelSubscriptionManagerUser":"rh-user","rhelSubscriptionManagerPassword":"rh-pass-0123","rhelActivationKey":"rh-key-0123","rhsmOfflineToken":"rh-token-0123"}}`)
	in.MachineDeployment.Spec.Template.Spec.Versions.Kubelet = "1.28.4" // in-tree openstack: a cloud-config
	r := NewRenderer()
	real, err := r.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	in.View = true
	view, err := r.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	realJSON, _ := json.Marshal(real.Config)
	viewJSON, _ := json.Marshal(view.Config)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, secret := range []string{"os-pass-0123", "rh-pass-0123", b64("rh-key-0123")} {
		if !strings.Contains(string(realJSON), secret) {
			t.Errorf("the real render lacks %q: the test does not test anything", secret)
		}
	}
	for _, secret := range []string{"os-pass-0123", "rh-pass-0123", "rh-key-0123", b64("rh-key-0123"), "rh-token-0123"} {
		if strings.Contains(string(viewJSON), secret) {
			t.Errorf("the view shows %q:\n%s", secret, viewJSON)
		}
	}
	if view.Config.CloudProvider.Name != "openstack" || view.Config.CloudProvider.Spec.Raw != nil {
		t.Errorf("view cloud provider %+v, want the name without the spec", view.Config.CloudProvider)
	}
	if !strings.Contains(string(viewJSON), "rh-user") {
		t.Error("the view hides the subscription user, which is no secret")
	}
}
