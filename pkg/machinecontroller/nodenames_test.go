package machinecontroller_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
)

// The node of a Machine is named after it or, on AWS, after the private DNS
// name machine-controller reports.
func TestNodeNames(t *testing.T) {
	m := machinecontrollertest.Machine(machinecontrollertest.MachineSet(machinecontrollertest.MD("ns", "md", "", nil), "md-1"), "md-1-abcde")
	if got := machinecontroller.NodeNames(m); !slices.Equal(got, []string{"md-1-abcde"}) {
		t.Errorf("without addresses: %v", got)
	}
	m.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "10.0.0.7"},
		{Type: corev1.NodeInternalDNS, Address: "IP-10-0-0-7.eu-west-1.compute.internal"},
		{Type: corev1.NodeHostName, Address: "ip-10-0-0-7.eu-west-1.compute.internal"},
		{Type: corev1.NodeExternalDNS, Address: "ec2-1-2-3-4.compute.amazonaws.com"},
	}
	want := []string{"md-1-abcde", "ip-10-0-0-7.eu-west-1.compute.internal"}
	if got := machinecontroller.NodeNames(m); !slices.Equal(got, want) {
		t.Errorf("with addresses: %v, want %v", got, want)
	}
}
