package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestOSCRedactsTheToken: the bootstrap payload carries the token the node fetches its
// provisioning data with; the OSC, readable by more people, must not.
func TestOSCRedactsTheToken(t *testing.T) {
	boot := rawPayload(t, testNamespace, "e2e-ubuntu-aws-bootstrap")
	script := cloudConfigFile(t, boot.Spec.UserData, "/opt/bin/fetch-provisioning")
	_, rest, _ := strings.Cut(script, "Authorization: Bearer ")
	token, _, _ := strings.Cut(rest, "'")
	if len(token) < 16 {
		t.Fatalf("bootstrap payload has no token in /opt/bin/fetch-provisioning:\n%s", script)
	}
	osc, err := env.osm.OsmV1alpha1().OperatingSystemConfigs(testNamespace).Get(testContext(t), "e2e-ubuntu-aws", getOptions())
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(osc)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), token) {
		t.Errorf("the OSC shows the token the node fetches its provisioning data with")
	}
}

// TestPayloadsAreTheSecrets: a payload is exactly the user-data the syncer writes into
// the Secret machine-controller reads.
func TestPayloadsAreTheSecrets(t *testing.T) {
	ctx := testContext(t)
	for _, md := range []string{"e2e-ubuntu-aws", "e2e-ubuntu-openstack"} {
		for _, typ := range []string{"bootstrap", "provisioning"} {
			secret := fmt.Sprintf("%s-%s-%s-config", md, testNamespace, typ)
			// The syncer writes Secrets asynchronously; allow it to catch up.
			eventually(t, 30*time.Second, func() error {
				s, err := env.kube.CoreV1().Secrets("cloud-init-settings").Get(ctx, secret, getOptions())
				if err != nil {
					return err
				}
				p, err := env.osm.OsmV1alpha1().ProvisioningPayloads(testNamespace).Get(ctx, md+"-"+typ, getOptions())
				if err != nil {
					return err
				}
				if got := string(s.Data["cloud-config"]); got != p.Spec.UserData {
					return fmt.Errorf("secret %s (%d bytes) differs from payload %s-%s (%d bytes)", secret, len(got), md, typ, len(p.Spec.UserData))
				}
				return nil
			})
		}
	}
}
