package machinecontroller

import (
	"strings"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestCheckSecretNames(t *testing.T) {
	ns := strings.Repeat("n", 63)
	fits := strings.Repeat("m", 253-len("--provisioning-config")-len(ns)) // the provisioning name is 253 long
	onCloud := func(name, cloud string) *clusterv1alpha1.MachineDeployment {
		md := &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(`{"cloudProvider":"` + cloud + `"}`)}
		return md
	}
	if err := CheckSecretNames(onCloud(fits, "aws")); err != nil {
		t.Errorf("253 characters: %v", err)
	}
	err := CheckSecretNames(onCloud(fits+"m", "aws"))
	if err == nil || !strings.Contains(err.Error(), "254 characters") || !strings.Contains(err.Error(), "-provisioning-config") {
		t.Errorf("254 characters: %v, want an error naming the provisioning secret", err)
	}
	// edge-provider-script-<md>-<ns> is one character longer.
	if err := CheckSecretNames(onCloud(fits, "edge")); err == nil || !strings.Contains(err.Error(), "edge-provider-script-") {
		t.Errorf("edge: %v, want an error naming the join script's secret", err)
	}
}
