package install

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
)

// TestRoundTripTypes fuzzes every type of the group through the internal and
// v1alpha1 versions (JSON and the generated conversions) and back.
func TestRoundTripTypes(t *testing.T) {
	roundtrip.RoundTripTestForAPIGroup(t, Install, metafuzzer.Funcs)
}
