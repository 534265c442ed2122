package e2e

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

var scriptTokenRE = regexp.MustCompile(`(?m)^token='([^']+)'$`)

// An MD on cloud provider edge gets a join script in the Secret upstream
// uses (edge-provider-script-<md>-<ns>, key fetch-bootstrap-script), which
// kubectl can print as a payload too; its token reads the MD's bootstrap
// payload and nothing of another MD's.
func TestEdgeJoinScript(t *testing.T) {
	ns := syncerNamespace(t)
	osp := "e2e-edge-" + ns
	applyProfile(t, e2eProfile(t, osp, "v1.0.0"))
	for _, name := range []string{"edge", "neighbour"} {
		md := syncerMD(ns, name, osp, "1")
		md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(`{"cloudProvider":"edge","cloudProviderSpec":{},` +
			`"operatingSystem":"ubuntu","operatingSystemSpec":{"distUpgradeOnBoot":false},"sshPublicKeys":["ssh-ed25519 AAAA e2e@osm"]}`)}
		createMD(t, md)
	}
	var secret *corev1.Secret
	eventually(t, time.Minute, func() error {
		var err error
		secret, err = env.kube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(context.Background(),
			machinecontroller.EdgeScriptSecretName("edge", ns), getOptions())
		if err != nil {
			return err
		}
		if len(secret.Data[machinecontroller.EdgeScriptDataKey]) == 0 {
			return fmt.Errorf("no %s in %s", machinecontroller.EdgeScriptDataKey, secret.Name)
		}
		return nil
	})
	script := string(secret.Data[machinecontroller.EdgeScriptDataKey])
	if p := rawPayload(t, ns, "edge-edge-script"); p.Spec.UserData != script || p.Spec.Format != "shell" {
		t.Errorf("the edge-script payload (%s, %d bytes) is not the Secret's script (%d bytes)", p.Spec.Format, len(p.Spec.UserData), len(script))
	}
	m := scriptTokenRE.FindStringSubmatch(script)
	if m == nil {
		t.Fatalf("no token in the join script:\n%s", script)
	}
	node := asToken(t, m[1])
	ctx := context.Background()
	eventually(t, 30*time.Second, func() error {
		_, err := node.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(ctx,
			machinecontroller.SecretName("edge", ns, "bootstrap"), getOptions())
		return err
	})
	if _, err := node.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(ctx,
		machinecontroller.SecretName("neighbour", ns, "bootstrap"), getOptions()); !apierrors.IsForbidden(err) {
		t.Errorf("the edge token read another MD's bootstrap payload: %v", err)
	}
}
