package cloudinit

import (
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// BenchmarkEncode encodes both payloads of upstream's Ubuntu case, as one render does.
func BenchmarkEncode(b *testing.B) {
	var c upstreamCase
	for _, uc := range loadUpstreamCases(b) {
		if uc.name == "ubuntu-aws-containerd" {
			c = uc
		}
	}
	boot, prov := c.osc.Spec.BootstrapConfig, c.osc.Spec.ProvisioningConfig
	if len(prov.Files) == 0 {
		b.Fatal("case ubuntu-aws-containerd not found")
	}
	opts := Options{Hostname: Hostname(osm.PayloadTypeBootstrap, "openstack", "")}
	b.ReportAllocs()
	size := 0
	for b.Loop() {
		x, err := Encode(boot, opts)
		if err != nil {
			b.Fatal(err)
		}
		y, err := Encode(prov, Options{})
		if err != nil {
			b.Fatal(err)
		}
		size = len(x) + len(y)
	}
	b.ReportMetric(float64(size), "bytes/op-output")
}
