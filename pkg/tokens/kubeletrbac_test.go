package tokens

import (
	"bytes"
	"os"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// The local cluster's kubelet TLS bootstrap RBAC (hack/local-cluster.sh with
// OSM_CONTROLLER_MANAGER=1) must grant the group our kubelet tokens carry, or
// nodes of the node test never get a certificate.
func TestLocalClusterKubeletRBACNamesKubeletGroup(t *testing.T) {
	data, err := os.ReadFile("../../hack/testdata/kubelet-bootstrap-rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]string{}
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var b rbacv1.ClusterRoleBinding
		if err := yaml.Unmarshal(doc, &b); err != nil {
			t.Fatal(err)
		}
		if b.Kind != "ClusterRoleBinding" {
			continue
		}
		for _, s := range b.Subjects {
			roles[b.RoleRef.Name] = s.Name
		}
	}
	for role, group := range map[string]string{
		"system:node-bootstrapper": KubeletGroup,
		"system:certificates.k8s.io:certificatesigningrequests:nodeclient":     KubeletGroup,
		"system:certificates.k8s.io:certificatesigningrequests:selfnodeclient": "system:nodes",
	} {
		if roles[role] != group {
			t.Errorf("ClusterRole %s is bound to %q, want %q", role, roles[role], group)
		}
	}
}
