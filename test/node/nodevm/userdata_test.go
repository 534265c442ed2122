package nodevm

import "testing"

func TestMachineUserData(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"cloud-init", "#cloud-config\nhostname: '<MACHINE_NAME>'\n", "#cloud-config\nhostname: 'node-a1'\n"},
		{"ignition data URL", `{"source":"data:,%3CMACHINE_NAME%3E"}`, `{"source":"data:,node-a1"}`},
		{"blank lines emptied, not removed", "a:\n  \n\t \nb: 1\n", "a:\n\n\nb: 1\n"},
		{"indentation of real lines kept", "a:\n  b: <MACHINE_NAME>\n", "a:\n  b: node-a1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(MachineUserData([]byte(tc.in), "node-a1")); got != tc.want {
				t.Errorf("MachineUserData(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
