package app

import (
	"bytes"
	"strings"
	"testing"
)

func TestServeHelpHasSections(t *testing.T) {
	cmd, _ := newServeCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, section := range []string{"Osm flags:", "Node flags:", "Cluster flags:", "Secure serving flags:", "Authentication flags:", "Authorization flags:", "Features flags:", "Logs flags:", "--worker-cluster-kubeconfig", "--disable-default-osps"} {
		if !strings.Contains(out.String(), section) {
			t.Errorf("help lacks %q", section)
		}
	}
}
