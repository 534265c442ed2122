package machinecontroller

import (
	"strings"
	"testing"
)

// Names we derive must differ for every MachineDeployment, however long its
// namespace and name, and whatever their dashes.
func TestDerivedNamesAreUniquePerMD(t *testing.T) {
	longA, longB := strings.Repeat("a", 50)+"-tenant", strings.Repeat("a", 50)+"-others"
	pairs := [][2]Ref{
		{{Namespace: longA, Name: "worker-pool-a"}, {Namespace: longB, Name: "worker-pool-a"}},
		{{Namespace: "team-prod", Name: "pool"}, {Namespace: "prod", Name: "pool-team"}},
		{{Namespace: "a-b", Name: "c"}, {Namespace: "a", Name: "b-c"}},
	}
	for _, p := range pairs {
		a, b := p[0], p[1]
		if KubeletBootstrapSecretName(a.Name, a.Namespace) == KubeletBootstrapSecretName(b.Name, b.Namespace) {
			t.Errorf("%s and %s share kubelet bootstrap secret %s", a, b, KubeletBootstrapSecretName(a.Name, a.Namespace))
		}
		if a.Hash() == b.Hash() {
			t.Errorf("%s and %s share a hash", a, b)
		}
	}
	name := KubeletBootstrapSecretName(strings.Repeat("m", 253), strings.Repeat("n", 63))
	if len(name) > 63 {
		t.Errorf("kubelet bootstrap secret name %q is %d characters long", name, len(name))
	}
}
